"""A corpus of secrets in the forms they take in coding sessions (issue 13): provider tokens, command
lines, config files, headers, URLs, prose and multi-line keys. Every secret is generated here from a
fixed seed (none is real), so the corpus is the same on every run and holds nothing a scanner of
this repository would flag as a leaked credential.

``CORPUS`` (tuned on) and ``HELD_OUT`` (never tuned on) are lists of :class:`Form`: a name, the messages of a session that hold the secret (most
forms are one message; a PEM key whose END line comes in a later message is two), and the secret
strings that must not survive. Used by tests/sessions/test_sessions_redaction.py and
bench/redaction.py.
"""

from __future__ import annotations

import base64
import random
import string
from dataclasses import dataclass

_rng = random.Random(20261124)


def _pick(alphabet: str, n: int) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


ALNUM = string.ascii_letters + string.digits
UPPER = string.ascii_uppercase + string.digits
LOWER = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"


def _b64(n: int) -> str:
    return _pick(B64, n)


def _password() -> str:
    return _pick(string.ascii_letters, 4) + _pick(string.digits, 3) + _pick("!%^*", 1) + _pick(string.ascii_letters, 3)


def _pem(kind: str) -> tuple[str, str]:
    """(the whole block, its body, which is the secret)."""
    body = "\n".join(_b64(64) for _ in range(6))
    return f"-----BEGIN {kind}-----\n{body}\n-----END {kind}-----", body


@dataclass(frozen=True)
class Form:
    name: str
    messages: tuple[str, ...]
    secrets: tuple[str, ...]


def _forms() -> list[Form]:
    forms: list[Form] = []

    def add(name: str, template: str, *secrets: str) -> None:
        forms.append(Form(name, (template.format(*secrets),), secrets))

    add("aws access key id in env", "export AWS_ACCESS_KEY_ID={}", "AKIA" + _pick(UPPER, 16))
    add("aws secret in env", "export AWS_SECRET_ACCESS_KEY={}", _b64(40))
    add("aws secret in a credentials file", "[default]\naws_secret_access_key = {}\nregion = eu-west-1", _b64(40))
    add("aws secret in prose", "The AWS secret for the staging account is {} and it rotates monthly.", _b64(40))
    add("github classic token", "git push failed, I set GH auth to {} and retried", "ghp_" + _pick(ALNUM, 36))
    add("github fine-grained token", "use {} for the API", "github_pat_" + _pick(ALNUM, 22) + "_" + _pick(ALNUM, 59))
    add("gitlab token", "the runner uses {}", "glpat-" + _pick(ALNUM, 20))
    add("slack bot token", "SLACK_BOT=\n{}", "xoxb-" + _pick(string.digits, 12) + "-" + _pick(ALNUM, 24))
    add("slack webhook", "post to {}", "https://hooks.slack.com/services/T" + _pick(UPPER, 8) + "/B" + _pick(UPPER, 8) + "/" + _pick(ALNUM, 24))
    add("openai key", "client = OpenAI(api_key='{}')", "sk-proj-" + _pick(ALNUM, 48))
    add("anthropic key", "I exported {} in my shell", "sk-ant-api03-" + _pick(ALNUM, 80))
    add("stripe live key", "stripe.api_key = {}", "sk_live_" + _pick(ALNUM, 24))
    add("google api key", "maps key {}", "AIza" + _pick(ALNUM + "_-", 35))
    add("npm token", "//registry.npmjs.org/:_authToken={}", "npm_" + _pick(ALNUM, 36))
    add("pypi token", "twine upload -u __token__ -p {}", "pypi-" + _pick(ALNUM, 60))
    add("hugging face token", "login with {}", "hf_" + _pick(ALNUM, 34))
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    payload = base64.urlsafe_b64encode(f'{{"sub":"{_pick(string.digits, 8)}","name":"{_pick(string.ascii_lowercase, 6)}"}}'.encode()).decode().rstrip("=")
    add("jwt", "the cookie holds {}", header + "." + payload + "." + _pick(ALNUM + "_-", 43))
    add("bearer token with digits", "curl -H 'Authorization: Bearer {}' https://api.example.com", _pick(ALNUM, 32) + "7")
    add("bearer token without digits", "Authorization: Bearer {}", _pick(string.ascii_letters, 40))
    add("basic auth header", "Authorization: Basic {}", base64.b64encode(f"admin:{_password()}".encode()).decode())
    add("url password", "DATABASE_URL is postgres://app:{}@db.internal:5432/app", _password())
    add("url password with @ and #", "clone https://deploy:{}@git.example.com/repo.git", _pick(string.ascii_letters, 5) + "@" + _pick(string.digits, 3) + "#" + _pick(string.ascii_letters, 4))
    add("git clone with an oauth token", "git clone https://oauth2:{}@gitlab.com/team/app.git", _pick(ALNUM, 26))
    add("mysql -pPASS", "mysql -u root -p{} shop < dump.sql", _password())
    add("mysql -p quoted", "mysql -h db -u admin -p'{}' -e 'show tables'", _password())
    add("curl -u user:pass", "curl -u deploy:{} https://ci.example.com/api", _password())
    add("sshpass -p", "sshpass -p {} ssh ops@10.0.0.5", _password())
    add("docker login -p", "docker login -u bot -p {} registry.example.com", _password())
    add("docker login --password", "docker login --username bot --password {} ghcr.io", _password())
    add("netrc", "machine api.example.com login bob password {}", _password())
    add("azure storage connection string", "DefaultEndpointsProtocol=https;AccountName=shopdata;AccountKey={};EndpointSuffix=core.windows.net", _b64(86) + "==")
    add("sendgrid key, bare", "the mail key is {}", "SG." + _pick(ALNUM + "_-", 22) + "." + _pick(ALNUM + "_-", 43))
    add("session cookie env", "SESSION_COOKIE={}", _pick(ALNUM, 48))
    add("dotenv password", "DB_PASSWORD={}\nDB_HOST=localhost", _password())
    add("json api key", '{{"name": "shop", "api_key": "{}"}}', _pick(LOWER, 32))
    add("yaml password", "database:\n  user: shop\n  password: {}\n", _password())
    add("token flag", "kubectl --token={} get pods", _pick(ALNUM, 40))
    add("export github token", "export GITHUB_TOKEN={}", "gho_" + _pick(ALNUM, 36))
    add("twilio auth token", "TWILIO_AUTH_TOKEN={}", _pick(HEX, 32))
    add("datadog api key", "DD_API_KEY={}", _pick(HEX, 32))
    add("mailgun key, bare", "mailgun {} for the domain", "key-" + _pick(HEX, 32))
    add("telegram bot token, bare", "bot {} answers /start", _pick(string.digits, 10) + ":AA" + _pick(ALNUM + "_-", 33))
    add("shopify token, bare", "store token {}", "shpat_" + _pick(HEX, 32))
    add("discord bot token, bare", "discord {}", "M" + _pick(ALNUM, 23) + "." + _pick(ALNUM, 6) + "." + _pick(ALNUM + "_-", 27))
    add("heroku api key", "HEROKU_API_KEY={}", f"{_pick(HEX, 8)}-{_pick(HEX, 4)}-{_pick(HEX, 4)}-{_pick(HEX, 4)}-{_pick(HEX, 12)}")
    add("password in prose", "my password is {} please do not share it", _password())
    add("passphrase for a key", "the passphrase: {}", _pick(string.ascii_lowercase, 6) + "-" + _pick(string.ascii_lowercase, 6) + "-" + _pick(string.digits, 4))
    block, body = _pem("RSA PRIVATE KEY")
    forms.append(Form("pem private key", (f"Here is the key:\n{block}\n",), tuple(body.split("\n"))))
    block, body = _pem("OPENSSH PRIVATE KEY")
    forms.append(Form("openssh private key", (f"cat ~/.ssh/id_ed25519\n{block}",), tuple(body.split("\n"))))
    block, body = _pem("PRIVATE KEY")
    split = block.split("\n")
    forms.append(Form(
        "pem key split across messages",
        ("\n".join(split[:4]), "\n".join(split[4:]) + "\nthat was the rest of the key"),
        tuple(body.split("\n")),
    ))
    block, body = _pem("PRIVATE KEY")
    escaped = block.replace("\n", "\\n")
    forms.append(Form("private key in a JSON service account", (f'{{"type": "service_account", "private_key": "{escaped}"}}',), tuple(body.split("\n"))))
    return forms


def _held_out() -> list[Form]:
    """Forms written after the rules were tuned on :data:`CORPUS` and never tuned on: the bench
    reports them apart (how the patterns do on shapes they were not fitted to)."""
    forms: list[Form] = []

    def add(name: str, template: str, *secrets: str) -> None:
        forms.append(Form(name, (template.format(*secrets),), secrets))

    add("PGPASSWORD env before psql", "PGPASSWORD={} psql -h db -U app", _password())
    add("MYSQL_PWD export", "export MYSQL_PWD={}", _password())
    add("redis-cli -a", "redis-cli -h cache -a {} ping", _password())
    add("mongodb+srv url", "mongodb+srv://svc:{}@cluster0.example.net/shop", _password())
    add("ftp url", "ftp://upload:{}@files.example.com/in/", _password())
    add("X-API-Key header", "curl -H 'X-API-Key: {}' https://api.example.com/v1", _pick(ALNUM, 32))
    add("Private-Token header", "curl --header 'PRIVATE-TOKEN: {}' https://gitlab.example.com/api/v4/projects", "glpat-" + _pick(ALNUM, 20))
    add("django secret key", "SECRET_KEY = '{}'", "django-insecure-" + _pick(LOWER + "!@#$%^&*(-_=+)", 50))
    add("client_secret json", '{{"client_id": "shop", "client_secret": "{}"}}', _pick(ALNUM, 40))
    add("aws session token", "aws_session_token = {}", _b64(300))
    add("vault token", "VAULT_TOKEN={}", "hvs." + _pick(ALNUM, 24))
    add("vault token, bare", "login worked with {}", "hvs." + _pick(ALNUM + "_-", 90))
    add("databricks token, bare", "the workspace token {}", "dapi" + _pick(HEX, 32))
    add("openai key in env", "OPENAI_API_KEY={}", "sk-" + _pick(ALNUM, 48))
    add("github token header", "Authorization: token {}", "ghp_" + _pick(ALNUM, 36))
    add("password flag with equals", "./deploy.sh --password={}", _password())
    add("kubeconfig token", "users:\n- name: admin\n  user:\n    token: {}", _pick(ALNUM, 64))
    add("docker auth in config.json", '{{"auths": {{"registry.example.com": {{"auth": "{}"}}}}}}', base64.b64encode(f"bot:{_password()}".encode()).decode())
    add("ssh password in prose", "ssh in as root, the password was {}", _password())
    add("api key in prose", "Use the API key {} for the sandbox", _pick(ALNUM, 32))
    return forms


CORPUS = _forms()
HELD_OUT = _held_out()
ALL_SECRETS = tuple(s for form in CORPUS + HELD_OUT for s in form.secrets)
