"""Build the example knowledge base of *tonearm*, a self-hosted music-streaming server.

tonearm is an invented but plausible Go project: it scans a music folder into SQLite, serves a
web player and the Subsonic API to mobile apps, and transcodes with ffmpeg on the fly. This
script writes what its engineers would have recorded in autology over a few months of work.

Everything is created WITH autology itself (``autology_mcp.knowledge.service.Autology``): nodes with
``capture``, links with ``relate``, and status changes with ``update``, so the files are exactly
what the tool writes. Node ids are random UUIDs, so each run starts from an empty store:

    python examples/build_knowledge_base.py            # writes examples/tonearm/.autology/
    python examples/build_knowledge_base.py /tmp/kb    # or anywhere else

Nodes are keyed below by short local names ("sqlite-wal", "scanner", ...); relations use them.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
from pathlib import Path

from autology_mcp.knowledge.service import Autology

PROJECT_DIR = Path(__file__).resolve().parent / "tonearm"

# Each node: key, type, title, tags, references, content, and optionally status (set with
# update after the relations), session (the work session it was captured in), source and
# confidence (a hook capture confirmed by a person gets hook_* and 0.85).
NODES: list[dict] = []


def node(key: str, type: str, title: str, tags: list[str], references: list[str], content: str, **extra) -> None:
    NODES.append(
        dict(key=key, type=type, title=title, tags=tags, references=references,
             content=textwrap.dedent(content).strip(), **extra)
    )


# ============================================================================== decisions

node(
    "sqlite-wal", "decision", "Store the library in SQLite in WAL mode",
    ["database", "sqlite", "storage"],
    ["internal/db/db.go", "internal/db/migrations/0001_init.sql"],
    """
    ## Context
    tonearm is installed by one person on a NAS or a Raspberry Pi and serves a household: 1-10
    users, libraries of 5k-150k tracks. Anything that needs a second daemon (PostgreSQL, Redis)
    is a support burden we do not want. The web UI reads while the scanner writes, so readers
    must not block on a long scan.

    ## Decision
    One SQLite file, `data/tonearm.db`, opened through `modernc.org/sqlite` (pure Go, no cgo, so
    cross-compiling to arm64 stays trivial) with `journal_mode=WAL`, `synchronous=NORMAL`,
    `busy_timeout=5000` and `foreign_keys=ON`. One writer connection (`db.Writer`) and a pool of
    4 read connections (`db.Reader`).

    ## Alternatives
    - **PostgreSQL**: better concurrency, but a second service to install, back up and upgrade.
    - **BoltDB / bbolt**: embedded, but no SQL; every query for the Subsonic API (`getAlbumList2`
      sorted by play count, by year, ...) would be hand-written index code.
    - **mattn/go-sqlite3**: faster by ~15% on our scan benchmark but needs cgo, which breaks our
      one-command cross builds for armv7 and arm64.

    ## Consequences
    - Backups are `sqlite3 tonearm.db ".backup x.db"` or a copy while stopped; documented in the README.
    - Only one writer: long write transactions stall other writers (see the scanner batching issue).
    - WAL mode does not work on network file systems: the data dir must be on local disk.
    """,
)

node(
    "poll-scan", "decision", "Rescan the music folder by polling every 15 minutes",
    ["scanner", "library"],
    ["internal/scanner/scanner.go", "internal/scanner/schedule.go"],
    """
    ## Context
    New albums are copied into the music folder by hand, by beets, or by a Lidarr import. The
    server has to notice them without the user pressing a button.

    ## Decision
    A ticker runs a quick scan every 15 minutes: walk the tree, compare each file's size and
    mtime with the `tracks` table, and read tags only for files that changed.

    ## Alternatives
    - **Filesystem notifications (inotify)**: instant, but platform-specific and we had no time
      to handle its edge cases for the 0.1 release.
    - **Manual scan button only**: simplest, but every user asked "why is my new album missing?".

    ## Consequences
    - New music shows up within 15 minutes; good enough for 0.1.
    - A walk of an 80k-track library on a Pi 4 with a USB disk takes ~40 s of disk I/O even when
      nothing changed, 96 times a day, and keeps the disk from spinning down.
    """,
)

node(
    "fsnotify-watch", "decision", "Watch the music folder with fsnotify plus a nightly full rescan",
    ["scanner", "library", "fsnotify"],
    ["internal/scanner/watch.go", "internal/scanner/schedule.go", "internal/config/config.go"],
    """
    ## Context
    Polling every 15 minutes (the earlier decision) kept USB disks awake and still made users wait
    up to 15 minutes. Issue reports from NAS users showed disks never spinning down.

    ## Decision
    Watch every directory under the music folders with `github.com/fsnotify/fsnotify` (inotify on
    Linux, FSEvents/kqueue on macOS/BSD). Events are debounced for 2 s per directory, then only that
    directory is rescanned. A full rescan still runs nightly at 03:30 (`scanner.full_rescan_cron`)
    to catch anything the watcher missed. Watching can be turned off with `scanner.watch = false`.

    ## Alternatives
    - **Keep polling, but every 60 minutes**: fewer wake-ups, even slower updates.
    - **Polling with a directory mtime shortcut**: skip unchanged directories; still wakes the disk.
    - **rjeczalik/notify**: recursive watches on more platforms, but unmaintained since 2021.

    ## Consequences
    - New albums appear ~2 s after the copy finishes.
    - inotify needs one watch per directory: a 150k-track library has ~14k directories, above the
      default `fs.inotify.max_user_watches` on older kernels (8192); we log a clear hint.
    - Network mounts (NFS, SMB) deliver no events; the nightly rescan is their only update path.
    """,
    status="active", session="2026-03-04-fsnotify",
)

node(
    "ffmpeg-subprocess", "decision", "Transcode by piping through an ffmpeg subprocess",
    ["transcoding", "ffmpeg"],
    ["internal/transcode/ffmpeg.go", "internal/transcode/profiles.go"],
    """
    ## Context
    Mobile clients on cellular data ask for a lower bitrate (`maxBitRate=128` in the Subsonic
    `stream` call) and some clients cannot play FLAC at all. We need to decode FLAC, ALAC, WavPack,
    APE, MP3, AAC and Opus and encode at least MP3 and Opus.

    ## Decision
    Run `ffmpeg` as a subprocess per stream, reading the source file and writing the encoded
    stream to stdout, which we copy to the HTTP response. The command line comes from the
    transcoding profile, e.g. `ffmpeg -v error -ss {offset} -i {path} -map 0:a:0 -c:a libopus -b:a
    128k -f ogg -`. The binary is found on `PATH` or set with `transcode.ffmpeg_path`.

    ## Alternatives
    - **Link libav* through cgo**: no process per stream, but cgo again, and ABI breaks on every
      ffmpeg major release.
    - **Pure Go decoders/encoders**: no maintained Opus or AAC encoder in Go.
    - **No transcoding, direct play only**: FLAC at ~1000 kbps over LTE is not acceptable.

    ## Consequences
    - Each concurrent transcode costs one process (~25 MB RSS, ~15% of one Pi 4 core for Opus).
    - ffmpeg must be installed; the Docker image ships it, bare-metal installs check it at start.
    - Killing the process when the client disconnects is our job (context cancellation).
    """,
)

node(
    "transcode-cache", "decision", "Cache transcoded streams on disk, keyed by track hash and profile",
    ["transcoding", "cache", "performance"],
    ["internal/cache/lru.go", "internal/transcode/cached.go"],
    """
    ## Context
    Albums are played again and again, and a phone that skips back re-requests the same track.
    Each transcode burns CPU on a Pi (an album of 12 FLAC tracks to Opus is ~90 s of one core).

    ## Decision
    Write every completed transcode to `data/cache/transcode/{aa}/{hash}-{profile}.{ext}` while
    streaming it (tee), and serve later requests from the file. The key is the track's content
    hash plus the profile name, so a re-tagged file (new hash) never serves stale audio. The cache
    has a size budget (`cache.transcode_max_size`, default 10 GiB) enforced by LRU eviction on
    last access time.

    ## Alternatives
    - **No cache**: simplest; CPU cost on every play.
    - **Pre-transcode the whole library at scan time**: predictable, but doubles disk use for
      tracks nobody plays on mobile.
    - **Cache in memory**: fast, but a single album is 60-100 MB of Opus.

    ## Consequences
    - Cached plays start in <50 ms and support HTTP Range, so seeking works for them.
    - A partially written file must never be served: write to `*.part`, rename when complete.
    - Concurrent requests for the same uncached track need coordination (single-flight).
    """,
    session="2026-03-18-transcode-cache",
)

node(
    "mp3-default", "decision", "Default transcoding profile: MP3 192 kbps CBR",
    ["transcoding", "codecs", "mobile"],
    ["internal/transcode/profiles.go"],
    """
    ## Context
    Clients that do not name a format in the Subsonic `stream` call need a default when the
    source cannot be sent as is (FLAC to a client that only declared MP3 support, or any request
    with `maxBitRate` below the source bitrate).

    ## Decision
    Default profile `mp3-192`: `libmp3lame`, 192 kbps constant bitrate, 44.1 kHz, stereo.

    ## Alternatives
    - **AAC 160 kbps**: better quality per bit, but the LGPL-safe `aac` encoder in stock ffmpeg
      is mediocre and `libfdk_aac` cannot be shipped in our Docker image.
    - **Opus 128 kbps**: best quality per bit, but in 2025 several iOS Subsonic clients could not
      play Ogg Opus.

    ## Consequences
    - Plays everywhere.
    - 192 kbps is ~86 MB per hour on cellular data, and MP3 adds encoder delay, so gapless albums
      get small gaps.
    """,
)

node(
    "opus-default", "decision", "Default transcoding profile: Opus 128 kbps in Ogg",
    ["transcoding", "codecs", "mobile"],
    ["internal/transcode/profiles.go", "internal/subsonic/stream.go"],
    """
    ## Context
    The MP3 192 kbps default cost users ~86 MB per hour on cellular data and broke gapless
    playback. By 2026 every client we test against (Symfonium, DSub, play:Sub, Feishin, Sonixd)
    plays Ogg Opus, and iOS 17 supports it natively.

    ## Decision
    The default profile becomes `opus-128`: `libopus`, 128 kbps VBR, 48 kHz, in an Ogg container.
    `mp3-192` stays available; a client that sends `format=mp3`, or a player that declares no Opus
    support in `transcoding.client_profiles`, gets MP3.

    ## Alternatives
    - **Keep MP3 192**: compatible, but wastes data and breaks gapless albums.
    - **Opus 96 kbps**: transparent for most listeners, but a few users hear artefacts on
      cymbals; 128 kbps leaves headroom.
    - **AAC via libfdk_aac**: licensing forbids shipping it in our image.

    ## Consequences
    - ~58 MB per hour instead of ~86 MB; gapless works (Opus has a pre-skip header).
    - Cached MP3 files of the old default are evicted naturally by the LRU.
    - Opus is always 48 kHz: ReplayGain values are unaffected, but the UI shows "48 kHz" for
      transcoded 44.1 kHz sources.
    """,
    session="2026-03-18-transcode-cache",
)

node(
    "subsonic-api", "decision", "Implement the Subsonic API 1.16.1 with OpenSubsonic extensions",
    ["subsonic", "api", "clients"],
    ["internal/subsonic/router.go", "internal/subsonic/handlers.go", "docs/subsonic.md"],
    """
    ## Context
    Writing our own iOS and Android apps is out of reach for a three-person project. There are
    more than twenty mature Subsonic clients, and users already have their favourite.

    ## Decision
    Serve the Subsonic REST API version 1.16.1 under `/rest/`, in both XML and JSON (`f=json`),
    plus the OpenSubsonic extensions `transcodeOffset`, `formPost` and `songLyrics`. Our own web UI
    uses a separate JSON API under `/api/v1/`.

    ## Alternatives
    - **Only our own API + a PWA**: full control, but no offline caching on iOS and no CarPlay.
    - **Jellyfin API compatibility**: bigger surface, video-centric, fewer music clients.
    - **Ampache API**: fewer actively maintained clients.

    ## Consequences
    - Instant access to the whole Subsonic client ecosystem.
    - We inherit its warts: token authentication with `md5(password + salt)` forces us to store
      passwords reversibly, and ids are opaque strings clients cache forever.
    - Client quirks need a compatibility test suite (`internal/subsonic/testdata/clients/`).
    """,
)

node(
    "jwt-cookie", "decision", "Web UI sessions: JWT in an HttpOnly cookie",
    ["auth", "security", "web-ui"],
    ["internal/auth/jwt.go", "internal/auth/middleware.go", "ui/src/api/client.ts"],
    """
    ## Context
    The web UI needs a login that survives restarts and works behind a reverse proxy under a
    sub-path (`/music/`). We do not want a sessions table written on every request.

    ## Decision
    On login, issue a JWT (HS256, 30-day expiry, claims `sub`, `adm`, `iat`) signed with a
    256-bit key generated at first start into `data/jwt.key`, and set it as an `HttpOnly`,
    `SameSite=Lax`, `Secure` (when behind HTTPS) cookie. State-changing requests also need the
    `X-Tonearm-CSRF` header.

    ## Alternatives
    - **Server-side sessions in SQLite**: revocable, but a write per request or a cache layer.
    - **JWT in localStorage + Authorization header**: readable by any XSS.
    - **Reuse Subsonic token auth in the UI**: puts the salted md5 token in every URL.

    ## Consequences
    - No sessions table; a restart keeps everyone logged in.
    - Tokens cannot be revoked individually before expiry: changing a password does not log out
      other devices. Rotating `data/jwt.key` logs everyone out. Needs review before 1.0.
    """,
    status="needs_review",
)

node(
    "fts5-search", "decision", "Search tracks, albums and artists with SQLite FTS5",
    ["search", "sqlite", "database"],
    ["internal/db/migrations/0007_fts.sql", "internal/db/search.go", "internal/subsonic/search.go"],
    """
    ## Context
    The Subsonic `search3` call and the web UI search box must answer "beatles abbey" or
    "sigur ros" (without the accent) in under 50 ms on a Pi for a 150k-track library. `LIKE '%x%'`
    took 900 ms there.

    ## Decision
    An FTS5 virtual table `search_fts(kind, ref_id, title, artist, album)` with the
    `unicode61 remove_diacritics 2` tokenizer and prefix indexes `prefix='2 3'`, kept in sync by
    triggers on `tracks`, `albums` and `artists`. Queries are rewritten so every term is a prefix
    query, ranked with `bm25(search_fts, 10.0, 5.0, 2.0)`.

    ## Alternatives
    - **Bleve**: richer scoring, but a second index to keep consistent and 3x the disk.
    - **Meilisearch**: another daemon.
    - **LIKE with trigram indexes**: not available in SQLite without an extension.

    ## Consequences
    - p50 8 ms, p99 31 ms on a Pi 4 with 150k tracks.
    - No typo tolerance: "beatels" finds nothing. Acceptable for now.
    - The triggers add ~20% to scan write time.
    """,
)

node(
    "single-binary", "decision", "Ship one static binary with the web UI embedded",
    ["packaging", "release", "web-ui"],
    ["cmd/tonearm/main.go", "ui/embed.go", ".goreleaser.yaml"],
    """
    ## Context
    Most installs are on a NAS or a Pi by people who are not Go or Node developers. Every extra
    file to place (static assets, templates, a config skeleton) is a support question.

    ## Decision
    Build the web UI with Vite in CI, embed `ui/dist/` with `//go:embed`, and release a single
    `CGO_ENABLED=0` binary per platform (linux amd64/arm64/armv7, darwin arm64, windows amd64)
    with GoReleaser, plus a Docker image that adds ffmpeg. Configuration has defaults for
    everything; a missing config file is not an error.

    ## Alternatives
    - **Serve the UI from a separate nginx container**: flexible, but two things to run.
    - **Ship the UI as a tarball next to the binary**: smaller binary, one more path to configure.

    ## Consequences
    - The binary is ~38 MB, of which ~1.9 MB is the UI.
    - A UI change needs a server release; UI developers use `vite dev` with a proxy to `:4533`.
    - This relies on the pure-Go SQLite driver (no cgo).
    """,
)

node(
    "docker-debian", "decision", "Docker image: Debian slim with the distribution's ffmpeg",
    ["packaging", "docker", "ffmpeg"],
    ["Dockerfile", "docs/install-docker.md"],
    """
    ## Context
    Half of our users run tonearm in Docker (Unraid, TrueNAS SCALE, Portainer). The image needs
    ffmpeg with libopus and libmp3lame for the transcoder, on amd64 and arm64.

    ## Decision
    `FROM debian:bookworm-slim`, `apt-get install --no-install-recommends ffmpeg`, run as UID
    1000 by default (overridable with `--user`), data in `/data`, music mounted read-only at
    `/music`. Image size: ~210 MB.

    ## Alternatives
    - **Alpine**: ~90 MB, but musl's ffmpeg build was 20-30% slower at Opus encoding on arm64
      in our measurements.
    - **distroless + static ffmpeg from johnvansickle.com**: smallest, but no shell for users
      debugging permission problems, and the static build lags upstream security fixes.

    ## Consequences
    - Security updates come from Debian; the image is rebuilt weekly by CI.
    - The music mount can stay read-only: tonearm never writes tags or artwork into the library.
    """,
)

# ============================================================================== components

node(
    "scanner", "component", "Library scanner (internal/scanner)",
    ["scanner", "library", "metadata"],
    ["internal/scanner/scanner.go", "internal/scanner/tags.go", "internal/scanner/watch.go"],
    """
    Turns the files under the configured music folders into rows of `tracks`, `albums`,
    `artists` and `artwork`.

    - **Walk**: `filepath.WalkDir`, skipping dot-directories and anything matching
      `scanner.ignore` (default `["@eaDir", "#recycle", "*.part"]`).
    - **Change detection**: size + mtime against the `tracks` table; unchanged files cost one
      `stat`. Changed files get their tags read with `github.com/dhowden/tag` (ID3v2, Vorbis
      comments, MP4) and, for WavPack/APE, `ffprobe`.
    - **Identity**: each file gets a content hash (see "Track identity"), so a moved file keeps
      its play counts and playlist entries.
    - **Writes**: batches of 500 tracks per transaction through `db.Writer`.
    - **Triggers**: startup, the fsnotify watcher (per directory, debounced) and the nightly
      full rescan at 03:30.

    Cold scan of 80k FLAC tracks on a Pi 4 over USB 3: 11 min; warm rescan with nothing changed: 38 s.
    """,
)

node(
    "watcher", "component", "Filesystem watcher (internal/scanner/watch.go)",
    ["scanner", "fsnotify"],
    ["internal/scanner/watch.go", "internal/scanner/debounce.go"],
    """
    Keeps one fsnotify watch per directory under each music folder and adds watches for new
    directories as they appear. Events go through a per-directory debouncer (2 s quiet period)
    and are then handed to the scanner as "rescan this directory" jobs.

    On `ENOSPC` from `inotify_add_watch` it logs once:
    `watch limit reached (fs.inotify.max_user_watches=8192); raise it or set scanner.watch=false`
    and falls back to relying on the nightly rescan for the directories it could not watch.
    """,
    session="2026-03-04-fsnotify",
)

node(
    "transcoder", "component", "Transcoder (internal/transcode)",
    ["transcoding", "ffmpeg", "streaming"],
    ["internal/transcode/ffmpeg.go", "internal/transcode/profiles.go", "internal/transcode/cached.go"],
    """
    `transcode.Open(ctx, track, profile, offset) (io.ReadCloser, error)` returns the encoded
    stream. It chooses between three paths:

    1. **Direct**: the source already matches the request (format allowed, bitrate under
       `maxBitRate`): the file itself, with Range support.
    2. **Cached**: the transcode cache has `{hash}-{profile}`: the cached file, with Range support.
    3. **Live**: starts ffmpeg (through the single-flight group), tees its stdout into the cache
       and the response.

    The ffmpeg process is bound to the request context: a client that disconnects kills it
    within 100 ms. At most `transcode.max_concurrent` (default `NumCPU`) live transcodes run at
    once; the rest wait up to 10 s, then get HTTP 503.
    """,
)

node(
    "cache", "component", "Transcode cache (internal/cache)",
    ["cache", "transcoding", "storage"],
    ["internal/cache/lru.go", "internal/cache/index.go"],
    """
    A size-bounded on-disk cache. Files live in `data/cache/transcode/{first two hex chars}/`.
    An in-memory index (map + doubly linked list ordered by last access) is rebuilt at start by
    walking the cache directory (~0.4 s for 20k files).

    - `Get(key)` opens the file and bumps it to the front.
    - `Create(key)` returns a writer to `key.part`; `Commit()` renames it, adds its size to the
      total and evicts from the back until the total is under `cache.transcode_max_size`.
    - Abandoned `.part` files older than 1 h are deleted at start.

    The same package backs the artwork cache with a separate budget (`cache.artwork_max_size`,
    default 500 MiB).
    """,
    session="2026-03-18-transcode-cache",
)

node(
    "subsonic-handlers", "component", "Subsonic API handlers (internal/subsonic)",
    ["subsonic", "api"],
    ["internal/subsonic/router.go", "internal/subsonic/handlers.go", "internal/subsonic/auth.go",
     "internal/subsonic/stream.go"],
    """
    Serves `/rest/{method}` and `/rest/{method}.view` for 58 of the 82 Subsonic 1.16.1 methods
    (no podcasts, no jukebox, no chat). Each handler returns a Go struct that `respond()` renders
    as XML or JSON depending on `f=`; errors use the Subsonic envelope
    `<subsonic-response status="failed"><error code="..." message="..."/>`.

    Authentication accepts `u`+`p` (plain or `enc:` hex) and `u`+`t`+`s` (token = md5(password +
    salt)), and the OpenSubsonic `apiKey`. The `stream` handler maps `format`, `maxBitRate` and
    `timeOffset` to a transcoding profile and offset and calls the transcoder.
    """,
)

node(
    "web-ui", "component", "Web UI (ui/, React + Vite)",
    ["web-ui", "frontend"],
    ["ui/src/App.tsx", "ui/src/player/Player.tsx", "ui/src/api/client.ts", "ui/vite.config.ts"],
    """
    A React 18 single-page app built by Vite into `ui/dist/` and embedded in the Go binary with
    `embed.FS`. It talks only to `/api/v1/` (our JSON API), never to `/rest/`.

    The player (`Player.tsx`) uses one `<audio>` element plus a preloaded second one for gapless
    transitions, and asks for `opus-128` when the browser reports Ogg Opus support
    (`audio.canPlayType('audio/ogg; codecs=opus')`), otherwise the original file.
    Bundle size budget: 250 kB gzipped, checked in CI.
    """,
)

node(
    "db-layer", "component", "Database layer (internal/db)",
    ["database", "sqlite"],
    ["internal/db/db.go", "internal/db/tracks.go", "internal/db/migrate.go", "internal/db/migrations"],
    """
    Owns the SQLite file: opening it with the pragmas of the WAL decision, running migrations
    at start, and all queries. Exposes repositories (`Tracks`, `Albums`, `Artists`, `Playlists`,
    `Users`, `Plays`) with methods that take a `context.Context` and return plain structs.

    Two handles: `Writer` (one connection, `SetMaxOpenConns(1)`) and `Reader` (4 connections,
    `mode=ro`). Every write goes through `Writer.Tx(ctx, func(tx *Tx) error)`, which retries
    `SQLITE_BUSY` up to 3 times with 50/100/200 ms back-off.
    """,
)

node(
    "artwork", "component", "Artwork resizer (internal/artwork)",
    ["artwork", "cache", "images"],
    ["internal/artwork/resize.go", "internal/artwork/extract.go"],
    """
    Serves cover art for `getCoverArt?id=...&size=N` and the web UI. Sources, in order:
    `cover.jpg`/`folder.jpg`/`front.png` in the album directory, then the embedded picture of the
    first track (extracted with `dhowden/tag`). Resizes with `golang.org/x/image/draw`
    (CatmullRom) to the requested size rounded up to 64, 128, 300, 600 or 1200 px, encodes JPEG
    quality 85, and stores the result in the artwork cache under `{album hash}-{size}`.
    """,
)

node(
    "auth-middleware", "component", "Authentication middleware (internal/auth)",
    ["auth", "security"],
    ["internal/auth/middleware.go", "internal/auth/jwt.go", "internal/auth/passwords.go"],
    """
    HTTP middleware for `/api/v1/`: reads the `tonearm_session` cookie, verifies the JWT
    signature and expiry, loads the user, and checks the `X-Tonearm-CSRF` header on POST, PUT and
    DELETE. Login is rate-limited to 10 attempts per minute per IP (token bucket in memory).

    Passwords are stored twice: an argon2id hash for the web UI, and an AES-GCM encrypted copy
    (key in `data/secret.key`) because Subsonic token auth needs the plain password.
    """,
)

node(
    "scrobbler", "component", "Scrobbler (internal/scrobble)",
    ["scrobbling", "integrations"],
    ["internal/scrobble/scrobble.go", "internal/scrobble/listenbrainz.go", "internal/scrobble/lastfm.go"],
    """
    Records plays in the `plays` table and forwards them to ListenBrainz and Last.fm for users
    who linked an account. A play counts after 50% of the track or 4 minutes, whichever comes
    first (the Last.fm rule). Outgoing submissions go through a persistent queue table
    (`scrobble_queue`) so plays made offline or during an outage are sent later, in order,
    retried with exponential back-off up to 24 h.
    """,
)

# ============================================================================== conventions

node(
    "migrations", "convention", "Database migrations are forward-only numbered SQL files",
    ["database", "migrations"],
    ["internal/db/migrations", "internal/db/migrate.go"],
    """
    - One file per change: `internal/db/migrations/NNNN_short_name.sql`, numbered with no gaps.
    - Forward only: no down migrations. To undo, write a new migration.
    - A migration that rewrites a large table (`tracks`) must say so in a first-line comment
      `-- slow: rewrites tracks` so the release notes can warn users.
    - Never edit a migration that has been released; CI compares the checksums of released
      migrations against `internal/db/migrations/released.sum`.
    """,
)

node(
    "errors-wrap", "convention", "Wrap errors with %w and a lowercase context, no stack traces",
    ["go", "errors"],
    ["internal/errs/errs.go"],
    """
    - Wrap with `fmt.Errorf("open track %d: %w", id, err)`: lowercase, no trailing punctuation,
      the operation and its key, then `%w`.
    - Compare with `errors.Is` / `errors.As`, never by string.
    - Sentinel errors live in the package that returns them (`db.ErrNotFound`,
      `transcode.ErrBusy`).
    - HTTP handlers translate errors once, at the edge: `db.ErrNotFound` becomes 404 in
      `/api/v1/` and Subsonic error code 70 in `/rest/`.
    """,
)

node(
    "logging", "convention", "Structured logging with slog; never log secrets",
    ["logging", "security", "go"],
    ["internal/log/log.go"],
    """
    - Use `log/slog` with key-value pairs: `slog.Info("scan finished", "tracks", n, "took", d)`.
      Messages are lowercase and do not interpolate values.
    - Keys are snake_case and stable (`track_id`, `user`, `profile`); dashboards grep them.
    - Never log passwords, JWTs, Subsonic `p`/`t`/`s` parameters or API keys. The request logger
      strips them from query strings (`log.RedactQuery`).
    - Debug level is for per-file scanner output; default level is info.
    """,
)

node(
    "relative-paths", "convention", "Store paths relative to the music folder, with forward slashes",
    ["library", "database", "paths"],
    ["internal/scanner/paths.go", "internal/db/tracks.go"],
    """
    `tracks.path` is relative to its music folder (`tracks.folder_id`), uses `/` on every OS, and
    is NFC-normalised (macOS writes NFD file names; the same album copied from a Mac must not
    show up twice). Convert with `scanner.RelPath` / `scanner.AbsPath` only; never join paths by hand.
    Moving the whole library to another disk then only needs a new folder root in the config.
    """,
)

node(
    "context-first", "convention", "Functions that do I/O take context.Context as first argument",
    ["go", "cancellation"],
    ["internal/db/db.go", "internal/transcode/ffmpeg.go"],
    """
    Every function that touches the database, the file system at scale, ffmpeg or the network
    takes `ctx context.Context` first and honours cancellation. Request handlers pass
    `r.Context()`, so a client that hangs up cancels its queries and kills its ffmpeg process.
    Background jobs (scanner, scrobble queue) get a context cancelled on shutdown, and the server
    waits up to 10 s for them.
    """,
)

node(
    "api-errors", "convention", "/api/v1 errors are RFC 9457 problem details",
    ["api", "errors", "web-ui"],
    ["internal/api/problem.go", "ui/src/api/client.ts"],
    """
    Every error from `/api/v1/` is `application/problem+json` with `type`, `title`, `status` and
    `detail`, plus `errors: [{field, message}]` for validation failures, e.g.
    `{"type": "/problems/validation", "status": 422, "errors": [{"field": "name", "message":
    "playlist name must not be empty"}]}`. Handlers return a `*api.Problem`; they never write
    error bodies themselves. The Subsonic endpoints keep the Subsonic error envelope instead.
    """,
)

# ============================================================================== concepts

node(
    "track-identity", "concept", "Track identity: content hash, not path",
    ["library", "identity", "metadata"],
    ["internal/scanner/hash.go", "internal/db/tracks.go"],
    """
    A track is identified by `xxh3(size || first 64 KiB || last 64 KiB)`, computed at scan time.
    The audio frames at both ends almost never change when tags are edited (tags live at the
    start in ID3v2/FLAC headers, but those are padded, so small edits keep the same bytes at the
    start of the audio; for MP4 the `moov` atom can move, so MP4 files also hash the `mdat` offset).

    Consequences: moving or renaming a file keeps its id, play counts, ratings and playlist
    entries. Re-encoding a file creates a new track. Two byte-identical copies in different
    folders are one track with two paths; the scanner keeps the first and logs the duplicate.

    The Subsonic ids clients cache are derived from this hash, so they survive rescans.
    """,
)

node(
    "album-grouping", "concept", "Album grouping: album artist, album title and release id",
    ["library", "metadata", "albums"],
    ["internal/scanner/albums.go"],
    """
    Tracks are grouped into an album by, in order of preference:

    1. the MusicBrainz release id (`MUSICBRAINZ_ALBUMID`), when present;
    2. otherwise `(album artist, album title, directory)`, where album artist falls back to
       `ALBUMARTIST`, then `"Various Artists"` when the `COMPILATION` flag is set, then the track
       artist.

    Including the directory stops two different albums called "Greatest Hits" by the same artist
    from merging; multi-disc albums in `CD1/`, `CD2/` subfolders are merged by the release id or
    by their common parent directory when the folder names match `(?i)^(cd|disc|disk)\\s*\\d+$`.
    """,
)

node(
    "transcoding-profile", "concept", "Transcoding profile",
    ["transcoding", "codecs"],
    ["internal/transcode/profiles.go", "config/tonearm.example.toml"],
    """
    A named recipe for turning a source file into what a client can play: codec, bitrate,
    sample rate, container, MIME type and the ffmpeg arguments. Built-in profiles: `opus-128`,
    `opus-96`, `mp3-192`, `mp3-320`, `aac-256` (when ffmpeg has an AAC encoder) and `raw`.

    The profile for a request is chosen from the explicit `format=` parameter, else the client's
    entry in `transcoding.client_profiles` (keyed by the Subsonic `c=` client name), else the
    server default. `maxBitRate` lowers the bitrate of the chosen profile but never switches codec.
    The profile name is part of the transcode cache key.
    """,
)

node(
    "replaygain", "concept", "ReplayGain and loudness normalisation",
    ["audio", "metadata", "playback"],
    ["internal/scanner/tags.go", "ui/src/player/gain.ts"],
    """
    Tracks carry ReplayGain 2.0 tags (`REPLAYGAIN_TRACK_GAIN`, `REPLAYGAIN_ALBUM_GAIN`, peaks)
    written by beets or foobar2000; tonearm reads them, it does not compute them. The web player
    applies album gain when playing an album in order and track gain in shuffle, with a
    pre-amp of 0 dB and peak protection. Opus files use the `R128_TRACK_GAIN` header (Q7.8 dB,
    relative to -23 LUFS), converted to ReplayGain's -18 LUFS reference by adding 5 dB.
    Transcoding never bakes gain into the audio: clients apply it.
    """,
)

node(
    "music-folders", "concept", "Music folders and per-user library access",
    ["library", "users", "permissions"],
    ["internal/config/config.go", "internal/db/folders.go"],
    """
    An installation has one or more music folders (e.g. `/srv/music` and `/srv/audiobooks`),
    each a row in `folders` with a root path. Users are granted access per folder; every query
    for tracks, albums and search filters by the user's folder ids. The Subsonic
    `getMusicFolders` call lists exactly the folders the user may see, and `musicFolderId`
    narrows a request to one of them.
    """,
)

node(
    "scrobbling", "concept", "Scrobbling: what counts as a play",
    ["scrobbling", "playback"],
    ["internal/scrobble/scrobble.go", "internal/subsonic/handlers.go"],
    """
    A "now playing" notification is sent when a track starts; a scrobble (a counted play) when it
    has played for half its length or 4 minutes, and only for tracks longer than 30 s. Subsonic
    clients report this themselves through `scrobble?submission=true`, so the server trusts their
    timestamps; the web UI reports through `/api/v1/plays`. Play counts, "recently played" and
    "most played" album lists are all computed from the `plays` table.
    """,
)

node(
    "playlists", "concept", "Playlists and smart playlists",
    ["playlists", "library"],
    ["internal/db/playlists.go", "internal/playlist/smart.go"],
    """
    A playlist is an ordered list of track ids owned by one user, optionally public. Because
    tracks are identified by content hash, playlists survive moves and renames. M3U files found in
    the music folder are imported read-only as public playlists owned by the admin.

    A smart playlist stores rules instead of tracks (`{"all": [{"genre": "Jazz"}, {"rating_gte":
    4}], "sort": "random", "limit": 100}`) and is evaluated into SQL at request time; results are
    cached for 60 s. Subsonic clients see smart playlists as ordinary read-only playlists.
    """,
)

# ============================================================================== patterns

node(
    "single-flight", "pattern", "Single-flight for concurrent transcodes of the same track",
    ["concurrency", "transcoding", "cache"],
    ["internal/transcode/cached.go"],
    """
    When several requests want the same uncached `{hash}-{profile}` at once (a phone that
    retries, two devices playing the same album), only the first starts ffmpeg. The others
    attach to the in-progress output: they read the `.part` file as it grows, waiting on a
    `sync.Cond` for new bytes, until the writer commits or fails.

    Built on a `map[key]*flight` guarded by a mutex, not `golang.org/x/sync/singleflight`,
    because followers need to stream partial results rather than wait for the final value.
    When the leader's client disconnects, the transcode continues if followers remain.
    """,
)

node(
    "worker-pool", "pattern", "Bounded worker pool for tag reading",
    ["concurrency", "scanner", "performance"],
    ["internal/scanner/pool.go"],
    """
    The walker sends changed file paths into a channel of capacity 256; `min(NumCPU, 8)` workers
    read tags and hash files, and send results to a single writer goroutine that batches them
    into transactions of 500. The bounded channel gives back-pressure: a slow disk slows the walk
    instead of growing memory. The single writer matches SQLite's single-writer model.
    """,
)

node(
    "lru-disk", "pattern", "Size-bounded LRU cache on disk with atomic commit",
    ["cache", "storage"],
    ["internal/cache/lru.go"],
    """
    For derived files that are expensive to produce and cheap to store (transcodes, resized
    artwork):

    - write to `name.part` in the final directory, `fsync`, rename to `name` (atomic on POSIX);
    - track size and last access in memory, rebuilt from the directory at start;
    - after each commit, evict least recently used files until under budget;
    - never trust a file without a commit: `.part` files are garbage.

    Last-access time is kept in memory, not via `atime`, because most NAS mounts use `noatime`.
    """,
)

node(
    "debounce", "pattern", "Debounce filesystem events per directory",
    ["fsnotify", "scanner"],
    ["internal/scanner/debounce.go"],
    """
    Copying an album produces hundreds of CREATE/WRITE/CHMOD events. Events are keyed by their
    directory; each event resets that directory's 2 s timer; when a timer fires, one "rescan
    directory" job is queued. A directory that keeps changing for more than 60 s is rescanned
    anyway, so a slow copy over the network still shows progress.
    """,
)

node(
    "range-serving", "pattern", "Serve seekable audio with HTTP Range requests",
    ["streaming", "http"],
    ["internal/stream/range.go"],
    """
    For files that exist in full (originals, committed cache entries), serve with
    `http.ServeContent`, which handles `Range`, `If-Range` and `206 Partial Content`, with the
    correct `Content-Type` from the profile and an `ETag` of `{hash}-{profile}`. Browsers and
    most Subsonic clients seek by issuing a new Range request, so this is what makes the seek bar
    work. Live transcodes cannot do this (their length is unknown).
    """,
)

node(
    "outbox-queue", "pattern", "Persistent outbox queue for calls to external services",
    ["integrations", "reliability", "database"],
    ["internal/scrobble/queue.go", "internal/db/migrations/0011_scrobble_queue.sql"],
    """
    Anything sent to a third party (ListenBrainz, Last.fm, webhooks) is first written to a table
    in the same transaction as the local change, then delivered by a background worker that
    retries with exponential back-off (1 min doubling to 6 h, given up after 24 h) and deletes the
    row on success. Rows are delivered in insertion order per user and service, so plays are never
    reordered. A crash or an outage never loses a submission and never blocks the request.
    """,
)

# ============================================================================== issues

node(
    "seek-live-transcode", "issue", "Seeking in a live transcode restarts the track",
    ["streaming", "transcoding", "seeking"],
    ["internal/transcode/ffmpeg.go", "internal/subsonic/stream.go", "ui/src/player/Player.tsx"],
    """
    A live transcode is sent with chunked encoding and no `Content-Length`, so browsers show no
    duration and seeking sends `Range: bytes=N-`, which we cannot honour: the track restarts
    from 0. Workarounds today: clients that support the OpenSubsonic `transcodeOffset`
    extension (Symfonium, Feishin) send `timeOffset=` and we start ffmpeg with `-ss`; the web
    UI does the same. Others must wait until the transcode is cached.

    Possible fix: estimate `Content-Length` from duration x bitrate and pad, as Navidrome does;
    risky for VBR Opus.
    """,
)

node(
    "nfs-no-events", "issue", "fsnotify sees no changes on NFS and SMB mounts",
    ["fsnotify", "scanner", "nas"],
    ["internal/scanner/watch.go", "docs/install-nas.md"],
    """
    inotify only reports changes made through the local kernel. When the music folder is an
    NFS or SMB mount and files are added on the NAS itself, no events arrive: new albums appear
    only after the nightly rescan. Reported by 6 users on Synology/TrueNAS setups.

    Options: detect network file systems (`statfs` magic numbers `NFS_SUPER_MAGIC`,
    `SMB2_MAGIC_NUMBER`) and fall back to polling for those folders only, at a configurable
    interval.
    """,
    session="2026-03-04-fsnotify",
)

node(
    "scan-write-lock", "issue", "Scanner batches hold the SQLite write lock and stall the UI",
    ["database", "sqlite", "scanner", "performance"],
    ["internal/scanner/pool.go", "internal/db/db.go"],
    """
    A cold scan writes batches of 500 tracks per transaction; with the FTS5 triggers each batch
    holds the write lock for ~1.8 s on a Pi 4. Meanwhile, starring a track or saving a playlist
    in the UI waits on `busy_timeout`, and scrobbles submitted during a scan sometimes fail
    with `SQLITE_BUSY` after the 3 retries.

    Reads are fine (WAL). Candidate fixes: batches of 100 (measured: scan 9% slower, lock held
    ~0.35 s), or a write queue that interleaves small user writes between scan batches.
    """,
    status="needs_review",
)

node(
    "reversible-passwords", "issue", "Subsonic token auth forces reversibly stored passwords",
    ["auth", "security", "subsonic"],
    ["internal/auth/passwords.go", "internal/subsonic/auth.go"],
    """
    Token authentication sends `t = md5(password + salt)`; to check it the server needs the
    plain password, so we keep an AES-GCM encrypted copy next to the argon2id hash. Anyone with
    both `tonearm.db` and `data/secret.key` can recover every password.

    Mitigations: OpenSubsonic `apiKey` authentication (per-client keys, stored hashed) is
    supported; an option `subsonic.legacy_auth = false` disables token and plain auth entirely
    and drops the encrypted copies. Not the default yet because DSub and play:Sub lack apiKey.
    """,
)

node(
    "cache-overshoot", "issue", "Transcode cache can overshoot its size budget",
    ["cache", "transcoding", "storage"],
    ["internal/cache/lru.go"],
    """
    Eviction runs after a commit, so with 8 live transcodes writing `.part` files at once the
    cache can exceed `cache.transcode_max_size` by up to 8 x the largest transcode (~800 MB
    for long classical tracks at 320 kbps). On a nearly full SD card this has filled the disk.
    Fix idea: reserve the estimated size (duration x bitrate) at `Create` and evict before
    writing.
    """,
)

node(
    "compilation-split", "issue", "Compilations split into one album per artist",
    ["metadata", "albums", "library"],
    ["internal/scanner/albums.go"],
    """
    Compilations tagged without `ALBUMARTIST` and without the `COMPILATION` flag fall back to the
    track artist, so a 20-track soundtrack becomes 20 one-track albums. Affects ~3% of albums in
    the libraries users sent us. Heuristic under discussion: if one directory holds tracks with
    the same album title and more than 3 distinct artists, treat it as a compilation.
    """,
)

node(
    "artwork-stale", "issue", "Replaced cover.jpg keeps showing the old artwork",
    ["artwork", "cache", "web-ui"],
    ["internal/artwork/resize.go", "internal/cache/lru.go"],
    """
    The artwork cache key is `{album hash}-{size}`, and the album hash does not change when only
    `cover.jpg` is replaced, so resized covers stay stale until evicted. Browsers make it worse:
    covers are served with `Cache-Control: max-age=31536000, immutable`. Fix: include the source
    image's mtime and size in the key and in the URL (`?v=`), or drop cached sizes when the
    scanner sees a changed image file.
    """,
)

# ============================================================================== sessions

node(
    "session-fsnotify", "session", "2026-03-04: fsnotify watcher replaces polling",
    ["scanner", "fsnotify"],
    ["internal/scanner/watch.go", "internal/scanner/debounce.go"],
    """
    - Replaced the 15-minute polling ticker with an fsnotify watcher and a nightly full rescan;
      recorded the decision and marked the polling decision superseded.
    - Added per-directory debouncing (2 s) after copying one album produced 1,400 events.
    - Found that NFS mounts deliver no events; opened an issue, kept the nightly rescan.
    - Tested on a 150k-track library: 14,212 directories, needs `max_user_watches` >= 16384.
    """,
    session="2026-03-04-fsnotify", source="hook_session_end", confidence=0.85,
)

node(
    "session-cache", "session", "2026-03-18: transcode cache, single-flight and Opus default",
    ["transcoding", "cache"],
    ["internal/cache/lru.go", "internal/transcode/cached.go", "internal/transcode/profiles.go"],
    """
    - Built the on-disk transcode cache (LRU, 10 GiB default) and wired it into the transcoder.
    - Added single-flight so two devices starting the same album share one ffmpeg process.
    - Switched the default profile from MP3 192 to Opus 128 after testing five clients.
    - Noticed the cache overshoots its budget under concurrent writes; recorded as an issue.
    """,
    session="2026-03-18-transcode-cache", source="hook_pre_compact", confidence=0.85,
)

node(
    "session-subsonic", "session", "2026-04-02: Subsonic client compatibility fixes",
    ["subsonic", "clients"],
    ["internal/subsonic/handlers.go", "internal/subsonic/testdata/clients"],
    """
    - Symfonium sent `timeOffset` on `stream`: implemented OpenSubsonic `transcodeOffset`.
    - DSub expected `<child>` elements to carry `isDir="false"` explicitly: fixed in XML output.
    - play:Sub failed on JSON numbers for `year`; now always an integer, never a string.
    - Added recorded client requests under `internal/subsonic/testdata/clients/` as regression tests.
    """,
    session="2026-04-02-subsonic", source="hook_post_commit", confidence=0.85,
)

# ============================================================================== relations
# (source, relation type, target, description)

RELATIONS: list[tuple[str, str, str, str | None]] = [
    # supersessions
    ("fsnotify-watch", "supersedes", "poll-scan", "event-driven rescans replace the 15-minute ticker"),
    ("opus-default", "supersedes", "mp3-default", "Opus 128 replaces MP3 192 as the default profile"),
    # decisions affect components
    ("sqlite-wal", "affects", "db-layer", "pragmas, one writer and a read pool"),
    ("sqlite-wal", "affects", "scanner", "the scanner writes through the single writer"),
    ("poll-scan", "affects", "scanner", None),
    ("fsnotify-watch", "affects", "watcher", None),
    ("fsnotify-watch", "affects", "scanner", "rescans one directory at a time"),
    ("ffmpeg-subprocess", "affects", "transcoder", None),
    ("transcode-cache", "affects", "transcoder", "cached path before live transcoding"),
    ("transcode-cache", "affects", "cache", None),
    ("opus-default", "affects", "transcoder", None),
    ("opus-default", "affects", "web-ui", "the player asks for opus-128 when the browser supports it"),
    ("mp3-default", "affects", "transcoder", None),
    ("subsonic-api", "affects", "subsonic-handlers", None),
    ("jwt-cookie", "affects", "auth-middleware", None),
    ("jwt-cookie", "affects", "web-ui", "cookie and CSRF header"),
    ("fts5-search", "affects", "db-layer", "search_fts table and triggers"),
    ("fts5-search", "affects", "subsonic-handlers", "search3"),
    # components use / depend on components
    ("scanner", "uses", "db-layer", None),
    ("scanner", "uses", "watcher", "directory rescan jobs"),
    ("transcoder", "uses", "cache", None),
    ("artwork", "uses", "cache", "separate artwork budget"),
    ("subsonic-handlers", "uses", "transcoder", "stream"),
    ("subsonic-handlers", "uses", "artwork", "getCoverArt"),
    ("subsonic-handlers", "uses", "scrobbler", "scrobble"),
    ("web-ui", "uses", "auth-middleware", None),
    ("scrobbler", "uses", "db-layer", "plays and scrobble_queue tables"),
    ("subsonic-handlers", "depends_on", "db-layer", None),
    ("subsonic-handlers", "depends_on", "auth-middleware", "shares users and the password store"),
    ("watcher", "depends_on", "scanner", None),
    ("auth-middleware", "depends_on", "db-layer", "users table"),
    ("transcode-cache", "depends_on", "track-identity", "the content hash is part of the key"),
    # components and patterns
    ("cache", "implements", "lru-disk", None),
    ("transcoder", "implements", "single-flight", None),
    ("scanner", "implements", "worker-pool", None),
    ("watcher", "implements", "debounce", None),
    ("transcoder", "implements", "range-serving", "direct and cached paths"),
    ("artwork", "implements", "lru-disk", None),
    # derivations
    ("single-flight", "derived_from", "transcode-cache", None),
    ("debounce", "derived_from", "session-fsnotify", "1,400 events for one album copy"),
    ("nfs-no-events", "derived_from", "fsnotify-watch", None),
    ("cache-overshoot", "derived_from", "session-cache", None),
    ("scan-write-lock", "derived_from", "sqlite-wal", "consequence of a single writer"),
    ("reversible-passwords", "derived_from", "subsonic-api", "token auth needs the plain password"),
    ("opus-default", "derived_from", "session-cache", "five clients tested"),
    # issues affect components
    ("seek-live-transcode", "affects", "transcoder", None),
    ("seek-live-transcode", "affects", "web-ui", None),
    ("nfs-no-events", "affects", "watcher", None),
    ("scan-write-lock", "affects", "scanner", None),
    ("reversible-passwords", "affects", "auth-middleware", None),
    ("cache-overshoot", "affects", "cache", None),
    ("compilation-split", "affects", "scanner", None),
    # general relations
    ("track-identity", "relates_to", "relative-paths", "the hash makes moves cheap; relative paths make re-rooting cheap"),
    ("album-grouping", "relates_to", "compilation-split", None),
    ("transcoding-profile", "relates_to", "opus-default", None),
    ("transcoding-profile", "relates_to", "transcoder", None),
    ("replaygain", "relates_to", "transcoding-profile", "gain is never baked into transcodes"),
    ("music-folders", "relates_to", "relative-paths", None),
    ("scrobbling", "relates_to", "scrobbler", None),
    ("seek-live-transcode", "relates_to", "range-serving", "what works for files, not for live output"),
    ("migrations", "relates_to", "db-layer", None),
    ("context-first", "relates_to", "transcoder", "client hang-up kills ffmpeg"),
    ("logging", "relates_to", "reversible-passwords", "never log p, t, s"),
    ("errors-wrap", "relates_to", "subsonic-handlers", "errors become Subsonic error codes at the edge"),
    ("session-subsonic", "relates_to", "subsonic-handlers", None),
    ("session-subsonic", "relates_to", "seek-live-transcode", "transcodeOffset as a workaround"),
    ("session-fsnotify", "relates_to", "fsnotify-watch", None),
    ("session-cache", "relates_to", "transcode-cache", None),
    # packaging, playlists, API errors, outbox, artwork staleness
    ("single-binary", "affects", "web-ui", "embedded with go:embed"),
    ("single-binary", "depends_on", "sqlite-wal", "the pure-Go driver keeps CGO_ENABLED=0 possible"),
    ("docker-debian", "relates_to", "ffmpeg-subprocess", "the image provides ffmpeg"),
    ("docker-debian", "derived_from", "single-binary", None),
    ("api-errors", "relates_to", "errors-wrap", "the /api/v1 side of translating errors at the edge"),
    ("web-ui", "uses", "api-errors", "client.ts shows field errors next to inputs"),
    ("playlists", "relates_to", "track-identity", "playlists hold content-hash ids"),
    ("scrobbler", "implements", "outbox-queue", None),
    ("outbox-queue", "derived_from", "scrobbling", None),
    ("artwork-stale", "affects", "artwork", None),
    ("artwork-stale", "relates_to", "lru-disk", "cache keys must change when the source changes"),
]

# Status changes made after the relations, as a person would: supersede, then mark the old one.
STATUS_CHANGES = {"poll-scan": "superseded", "mp3-default": "superseded"}


def build(root: Path) -> dict[str, str]:
    """Create the knowledge base under ``root/.autology`` from scratch; returns key -> node id."""
    base = root / ".autology"
    if base.exists():
        shutil.rmtree(base)  # ids are random: never mix two generations
    autology = Autology.open(root)
    try:
        ids: dict[str, str] = {}
        for spec in NODES:
            result = autology.capture(
                spec["title"],
                spec["content"],
                type=spec["type"],
                tags=spec["tags"],
                references=spec["references"],
                session=spec.get("session"),
                source=spec.get("source", "manual"),
                confidence=spec.get("confidence"),
                status=spec.get("status"),
            )
            ids[spec["key"]] = result.id
        for source, relation_type, target, description in RELATIONS:
            autology.relate(ids[source], ids[target], relation_type, description=description)
        for key, status in STATUS_CHANGES.items():
            autology.update(ids[key], status=status)
        return ids
    finally:
        autology.close()


def main() -> int:
    root = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else PROJECT_DIR
    root.mkdir(parents=True, exist_ok=True)
    ids = build(root)
    autology = Autology.open(root)
    status = autology.status()
    autology.close()
    print(f"wrote {len(ids)} nodes and {status.totalRelations} relations to {root / '.autology'}")
    print("  nodes:     " + ", ".join(f"{k} {v}" for k, v in status.nodesByType.items()))
    print("  status:    " + ", ".join(f"{k} {v}" for k, v in status.nodesByStatus.items()))
    print("  relations: " + ", ".join(f"{k} {v}" for k, v in status.relationsByType.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
