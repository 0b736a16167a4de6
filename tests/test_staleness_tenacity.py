"""Staleness (issue 38): the readings that came from the errors of the tenacity replay, once it joined the tuning
side, each with real git and files on both sides (no flag, and a flag). Its history turned mypy on: ``@overload``
stubs taken away, ``if x is None: raise ...`` and ``"<unknown>" if fn is None else name(fn)`` added by the dozen, a
local read where the attribute chain it holds was, a bare annotation declaring an attribute. Also a test replaced by
two others, a file a folder's node names in prose moved, a decorator the node names, and a call the node writes that
gained an argument (still a flag: reading it as kept was taken back)."""

from __future__ import annotations

from pathlib import Path

from test_staleness import commit, edit, git, one_file_repo, only
from test_staleness_sympy import capture

LOG = '''def before_log(logger, level):
    def log_it(state):
        logger.log(level, f"Starting call to '{name_of(state.fn)}', attempt {state.attempt_number}.")

    return log_it
'''

LOG_CHECKED = '''def before_log(logger, level):
    def log_it(state):
        if state.outcome is None:
            raise RuntimeError("log_it() called before outcome was set")
        if state.fn is None:
            # can't really happen, but we must please mypy
            fn_name = "<unknown>"
        else:
            fn_name = name_of(state.fn)
        logger.log(level, f"Starting call to '{fn_name}', attempt {state.attempt_number}.")

    return log_it
'''


def test_the_none_checks_a_type_checker_asks_for_are_no_change(tmp_path: Path) -> None:
    """A guard that raises when a value is None and a constant fallback for a None value, added for mypy: the
    message the node quotes is the same when the value is there. A node that speaks of None is about such a
    check: for it they are a change. A real change beside them still is one."""
    root = one_file_repo(tmp_path / "n", "pkg/before.py", LOG, "log")
    node = capture(root, ["pkg/before.py#before_log"], "`before_log(logger, level)` logs \"Starting call to\" with "
                   "the callback's name from `name_of()` before each attempt.", "before_log names the callback",
                   type="component")
    about_none = capture(root, ["pkg/before.py#before_log"], "`before_log(logger, level)` logs \"Starting call to\" "
                         "with the name from `name_of()`, which returns None for a lambda.",
                         "before_log and nameless callbacks", type="component")
    commit(root, "record")
    (root / "pkg/before.py").write_text(LOG_CHECKED)
    commit(root, "mypy")
    assert only(root, node).stale is False
    assert only(root, about_none).stale is True
    edit(root, "            fn_name = name_of(state.fn)", "            fn_name = repr(state.fn)", path="pkg/before.py")
    commit(root, "repr, not the name")
    finding = only(root, node)
    assert finding.stale is True and "name_of" in finding.why


ITER = '''def iterate(self, state):
    fut = state.outcome
    if fut is None:
        return self.before(state)
    explicit = state.outcome.failed and isinstance(state.outcome.exception(), TryAgain)
    if not (explicit or self.retry(state)):
        return fut.result()
    return self.wait(state)
'''


def test_a_local_read_where_the_chain_it_holds_was_is_no_change(tmp_path: Path) -> None:
    """``fut = state.outcome`` bound once: ``fut.failed`` is ``state.outcome.failed``. Read through, a real change
    still shows: the ``TryAgain`` test taken away is a flag."""
    root = one_file_repo(tmp_path / "a", "pkg/core.py", ITER, "iterate")
    node = capture(root, ["pkg/core.py#iterate"], "`iterate(state)` retries on a `TryAgain` exception of the "
                   "state's outcome; otherwise it returns `fut.result()` when the retry strategy says no.",
                   "iterate decides each attempt", type="concept")
    commit(root, "record")
    edit(root, "explicit = state.outcome.failed and isinstance(state.outcome.exception(), TryAgain)",
         "explicit = fut.failed and isinstance(fut.exception(), TryAgain)", path="pkg/core.py")
    commit(root, "read fut")
    assert only(root, node).stale is False
    edit(root, "explicit = fut.failed and isinstance(fut.exception(), TryAgain)", "explicit = fut.failed",
         path="pkg/core.py")
    commit(root, "any failure")
    finding = only(root, node)
    assert finding.stale is True and "TryAgain" in finding.why


RETRY = '''@overload
def retry(fn):
    pass


@overload
def retry(*dargs, **dkw):
    pass


def retry(*dargs, **dkw):
    """Wrap a function with a new `Retrying` object."""
    if len(dargs) == 1 and callable(dargs[0]):
        return retry()(dargs[0])
    return wrap(Retrying(*dargs, **dkw))
'''


def test_overload_stubs_are_not_the_function(tmp_path: Path) -> None:
    """The two ``@overload`` stubs of ``retry`` taken away: the function is its body, unchanged. The body
    changed so that it no longer builds a ``Retrying`` is a flag. For a node that speaks of the overloads (typer's
    issue about what they list), they are the symbol: their removal is a flag."""
    root = one_file_repo(tmp_path / "o", "pkg/api.py", RETRY, "retry")
    node = capture(root, ["pkg/api.py#retry"], "`@retry` works bare or called with arguments; either way it "
                   "builds a new `Retrying` object from them.", "retry is usable bare or with arguments",
                   type="component")
    stubs = capture(root, ["pkg/api.py#retry"], "`retry` has two `@overload` signatures, `retry(fn)` and "
                    "`retry(*dargs, **dkw)`, so that type checkers know what each form returns.",
                    "retry's overloads", type="component")
    commit(root, "record")
    text = (root / "pkg/api.py").read_text()
    (root / "pkg/api.py").write_text(text[text.index("def retry(*dargs, **dkw):\n    \"\"\""):])
    commit(root, "no overloads")
    assert only(root, node).stale is False
    assert only(root, stubs).stale is True
    edit(root, "wrap(Retrying(*dargs, **dkw))", "wrap(Controller(*dargs, **dkw))", path="pkg/api.py")
    commit(root, "a controller")
    assert only(root, node).stale is True


WRAPS = '''def wraps(self, f):
    @functools.wraps(f)
    def wrapped_f(*args, **kw):
        return self(f, *args, **kw)

    wrapped_f.retry = self
    return wrapped_f
'''


def test_a_call_the_node_gives_that_gained_an_argument_stays_a_flag(tmp_path: Path) -> None:
    """``functools.wraps(f)`` now ``functools.wraps(f, WRAPPER_ASSIGNMENTS + ("__defaults__",))``: the call the node
    writes is not the one made. Reading it as kept was tried on tenacity's errors and taken back: a node that
    writes ``json.dumps(data)`` means its default separators, and an issue's ``print(error)`` that gains
    ``markup=True`` is its fix (starlette and rich lost true flags)."""
    root = one_file_repo(tmp_path / "w", "pkg/wrap.py", WRAPS, "wraps")
    node = capture(root, ["pkg/wrap.py#wraps"], "`wraps(f)` returns a wrapper made with `functools.wraps(f)` whose "
                   "calls all run on this controller, exposed as `retry`.", "wraps runs every call on one controller",
                   type="component")
    commit(root, "record")
    edit(root, "    wrapped_f.retry = self\n", "    wrapped_f.retry = self\n    wrapped_f.statistics = {}\n", path="pkg/wrap.py")
    commit(root, "statistics")
    assert only(root, node).stale is False
    edit(root, "@functools.wraps(f)", '@functools.wraps(f, functools.WRAPPER_ASSIGNMENTS + ("__defaults__",))',
         path="pkg/wrap.py")
    commit(root, "copy the defaults too")
    finding = only(root, node)
    assert finding.stale is True and "`functools.wraps(f)` is gone" in finding.why


EXIT = '''class Attempt:
    def __exit__(self, exc_type, exc_value, tb):
        if isinstance(exc_value, BaseException):
            self.state.set_exception((exc_type, exc_value, tb))
            return True
        self.state.set_result(0)
        return False
'''


def test_a_test_replaced_by_others_is_not_one_more_condition(tmp_path: Path) -> None:
    """The test around the call the node names, ``isinstance(exc_value, BaseException)``, replaced by two others
    (``exc_value is not None and tb is not None``): the call is asked another way, not under one more condition.
    The old test kept with a clause added is a flag."""
    root = one_file_repo(tmp_path / "e", "pkg/attempt.py", EXIT, "exit")
    node = capture(root, ["pkg/attempt.py#Attempt"], "On exit with an exception, `Attempt` stores it with "
                   "`state.set_exception()` and swallows it.", "Attempt swallows the block's exception",
                   type="component")
    commit(root, "record")
    edit(root, "if isinstance(exc_value, BaseException):", "if exc_value is not None and tb is not None:",
         path="pkg/attempt.py")
    commit(root, "typed test")
    assert only(root, node).stale is False
    edit(root, "if exc_value is not None and tb is not None:", "if isinstance(exc_value, BaseException) "
         "and self.swallow:", path="pkg/attempt.py")
    commit(root, "only when asked to swallow")
    finding = only(root, node)
    assert finding.stale is True and "under a condition" in finding.why


CLASS = '''class AsyncRetrying(BaseRetrying):
    def __init__(self, sleep=sleep, **kwargs):
        super().__init__(**kwargs)
        self.sleep = sleep
'''


def test_a_bare_annotation_declaring_an_attribute_is_for_the_type_checker(tmp_path: Path) -> None:
    """``sleep: Callable[...]`` added above ``__init__``, which sets ``self.sleep``: the span's code is the same.
    A bare annotation no method sets is a field (a dataclass's) and counts."""
    root = one_file_repo(tmp_path / "c", "pkg/aio.py", CLASS, "aio")
    node = capture(root, ["pkg/aio.py#L1-L4"], "## Context\nThe sleep must be awaited.\n\n## Decision\nAsyncRetrying's "
                   "constructor takes a `sleep` of its own, asyncio's by default, and hands every other keyword to the "
                   "base through `**kwargs`.\n\n## Alternatives\nSniffing the loop.\n\n## Consequences\nTrio passes "
                   "its own.", "AsyncRetrying takes its own sleep", type="decision")
    commit(root, "record")
    edit(root, "class AsyncRetrying(BaseRetrying):\n", "class AsyncRetrying(BaseRetrying):\n"
         "    sleep: Callable[[float], Awaitable[Any]]\n\n", path="pkg/aio.py")
    commit(root, "typed attribute")
    assert only(root, node).stale is False
    fields = one_file_repo(tmp_path / "d", "pkg/options.py", "@dataclass\nclass Options:\n    retries: int = 3\n",
                           "options")
    options = capture(fields, ["pkg/options.py#L1-L3"], "`Options` holds `retries`; the `sleep` between attempts is "
                      "the controller's.", "Options hold the retries", type="component")
    commit(fields, "record")
    edit(fields, "    retries: int = 3\n", "    sleep: float\n    retries: int = 3\n", path="pkg/options.py")
    commit(fields, "a field")
    assert only(fields, options).stale is True


def test_a_file_a_folder_s_node_names_in_prose_moved_is_a_flag(tmp_path: Path) -> None:
    """"_asyncio.py (AsyncRetrying)" in prose, moved to ``pkg/asyncio/__init__.py``: the folder no longer holds the
    file the node names. A file named in prose that the folder never held says nothing."""
    root = one_file_repo(tmp_path / "f", "pkg/__init__.py", "from .core import Retrying\n", "pkg")
    (root / "pkg/_asyncio.py").write_text("class AsyncRetrying:\n    pass\n")
    commit(root, "async", when="2020-01-02T00:00:00Z")
    node = capture(root, ["pkg/"], "The package is flat: __init__.py holds the controllers and the optional one "
                   "lives in _asyncio.py (AsyncRetrying); setup.py builds it.", "pkg is one flat package",
                   type="component")
    commit(root, "record")
    (root / "pkg/core.py").write_text("class Retrying:\n    pass\n")
    commit(root, "core")
    assert only(root, node).stale is False
    (root / "pkg/asyncio").mkdir()
    git(root, "mv", "pkg/_asyncio.py", "pkg/asyncio/__init__.py")
    commit(root, "a subpackage")
    finding = only(root, node)
    assert finding.stale is True and "pkg/_asyncio.py is gone" in finding.why


GROUPBY = '''@environmentfilter
def do_groupby(environment, value, attribute):
    getter = make_attrgetter(environment, attribute)
    return [Group(key, list(values)) for key, values in groupby(sorted(value, key=getter), getter)]
'''


def test_a_decorator_the_node_names_taken_away_is_a_flag(tmp_path: Path) -> None:
    """(Read from the jinja replay, where the call rule above had flagged it by chance.) "`do_groupby()` is an
    environmentfilter", and ``@environmentfilter`` is now ``@pass_environment``: a flag. A decorator the node does
    not name, added (``@lru_cache``), is not."""
    root = one_file_repo(tmp_path / "g", "pkg/filters.py", GROUPBY, "groupby")
    node = capture(root, ["pkg/filters.py#do_groupby"], "`do_groupby(environment, value, attribute)` is an "
                   "environmentfilter: it sorts the sequence by the attribute, then groups it.",
                   "groupby sorts, then groups", type="component")
    commit(root, "record")
    edit(root, "@environmentfilter\n", "@environmentfilter\n@lru_cache\n", path="pkg/filters.py")
    commit(root, "cached")
    assert only(root, node).stale is False
    edit(root, "@environmentfilter\n", "@pass_environment\n", path="pkg/filters.py")
    commit(root, "the new decorator")
    finding = only(root, node)
    assert finding.stale is True and "`@environmentfilter` is gone" in finding.why
