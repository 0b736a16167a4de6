"""A corpus of secrets in the forms they take in coding sessions (issue 13): provider tokens, command
lines, config files, headers, URLs, prose and multi-line keys. Every secret is generated here from a
fixed seed (none is real), so the corpus is the same on every run and holds nothing a scanner of
this repository would flag as a leaked credential.

``CORPUS`` (tuned on), ``HELD_OUT`` (written after the rules of issue 13 and not tuned on then; the
4 of its forms that leaked, redis-cli ``-a``, a bare Vault ``hvs.`` token, a docker config.json
``auth`` value and an API key in prose, were tuned on in issue 29) and ``FRESH`` (issue 29: a second
held-out set, written from vendors' documentation of credential formats before the rules of issue 29
were changed, and never tuned on) are lists of :class:`Form`: a name, the messages of a session that
hold the secret (most forms are one message; a PEM key whose END line comes in a later message is
two), and the secret strings that must not survive. Used by tests/sessions/test_sessions_redaction.py
and bench/redaction.py.

Where each ``FRESH`` form's format and context come from (read 2026-11-25):

- GitLab runner authentication token ``glrt-``, passed to ``gitlab-runner register --token``:
  https://docs.gitlab.com/ee/security/token_overview.html and gitlab-org/gitlab issue 383198
  (the ``glrt-`` prefix).
- Slack app-level token ``xapp-`` given to Bolt's Socket Mode handler:
  https://api.slack.com/authentication/token-types (app-level tokens; the ``xapp-`` prefix as
  Salesforce's Slack app metadata type documents it).
- DigitalOcean ``dop_v1_`` token on doctl's global ``--access-token`` flag:
  https://docs.digitalocean.com/reference/doctl/reference/auth/init/
- Linear personal API key ``lin_api_`` sent as the whole ``Authorization`` header, no ``Bearer``:
  https://linear.app/developers/graphql (as quoted by unified.to's Linear API key guide).
- Okta API token in the ``SSWS`` authorization scheme:
  https://developer.okta.com/docs/guides/create-an-api-token/
- age identity ``AGE-SECRET-KEY-1…`` (Bech32) as age-keygen writes it:
  https://man.archlinux.org/man/age-keygen.1.en
- Azure Storage SAS URL, the ``sig=`` signature URL-encoded:
  https://learn.microsoft.com/en-us/training/modules/configure-storage-security/4-identify-uri-sas-parameters
- Tailscale auth key ``tskey-auth-`` on ``tailscale up --authkey``:
  https://tailscale.com/kb/1085/auth-keys
- PostgreSQL password file line ``hostname:port:database:username:password``:
  https://www.postgresql.org/docs/current/libpq-pgpass.html
- Oracle JDBC thin URL with ``user/password@``:
  https://docs.oracle.com/cd/E82638_01/jajdb/oracle/jdbc/OracleDriver.html
- Microsoft JDBC URL with ``password=…;``:
  https://learn.microsoft.com/en-us/sql/connect/jdbc/building-the-connection-url
- Postman API key ``PMAK-<24 hex>-<34 hex>`` given to ``postman login --with-api-key``:
  https://learning.postman.com/docs/developer/postman-api/authentication/ (the key and the CLI);
  the ``PMAK-`` shape from GitGuardian's Postman detector page (Postman's page does not show one).
- Grafana service account token ``glsa_…_<8 hex>`` as the Terraform provider's ``auth``:
  https://grafana.com/docs/learning-paths/configure-grafana-terraform/install-provider (the shape
  from the grafana-operator docs' example secret).
- New Relic license key (40 characters, ``…NRAL``) in newrelic.yml's ``license_key``:
  https://docs.newrelic.com/docs/accounts/accounts-billing/account-setup/new-relic-license-key
- Notion integration secret ``ntn_`` passed to the SDK's ``Client(auth=…)``:
  https://developers.notion.com/reference/authentication (the ``ntn_`` prefix from Airbyte's
  Notion connector docs).
- crates.io token on ``cargo login <token>``: https://doc.rust-lang.org/cargo/commands/cargo-login.html
  (the ``cio`` prefix of current crates.io tokens is from memory, not from a page read here).
- Cloudflare Global API key in ``X-Auth-Key`` (new keys are ``cfk_`` + 40 + checksum):
  https://developers.cloudflare.com/fundamentals/api/get-started/keys/ and
  https://developers.cloudflare.com/fundamentals/api/get-started/token-formats
- Twilio API key secret passed positionally to ``Client(api_key_sid, api_key_secret, account_sid)``:
  https://www.twilio.com/docs/iam/api-keys (and TwilioDevEd/api-snippets' api-auth example).
- ``htpasswd -b file user password``: https://httpd.apache.org/docs/2.4/programs/htpasswd.html
- ``keytool … -storepass … -keypass …``: https://docs.oracle.com/en/java/javase/17/docs/specs/man/keytool.html
  (IBM's keytool docs warn the passwords are then on the command line).
- ``CREATE ROLE … LOGIN PASSWORD '…'``: https://www.postgresql.org/docs/current/sql-createrole.html
- ``CREATE USER '…'@'%' IDENTIFIED BY '…'``: https://dev.mysql.com/doc/refman/8.0/en/create-user.html
- ``az login --service-principal -u <app id> -p <client secret> --tenant …`` (client secrets hold
  ``~``): https://learn.microsoft.com/en-us/cli/azure/authenticate-azure-cli-service-principal
- mongosh ``db.auth("user", "cleartext password")``:
  https://www.mongodb.com/docs/manual/tutorial/authenticate-a-user/
- Vault token of the 1.0-1.9 format (``s.`` service token) on ``vault login``:
  https://developer.hashicorp.com/vault/docs/upgrading/upgrade-to-1.0.0
- Doppler service token ``dp.st.<config>.`` set with ``doppler configure set token``:
  https://docs.doppler.com/reference/api (token kinds) and Dokploy's Doppler page (the prefixes).
- PyPI API token (``pypi-AgEIcHlwaS5vcmc…``) in ~/.pypirc under ``username = __token__``:
  https://packaging.python.org/en/latest/specifications/pypirc/
- Google app password (16 letters, shown in four groups) in prose:
  https://support.google.com/accounts/answer/185833
- kubeconfig ``client-key-data`` (a base64 PEM key):
  https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/
- requests' ``auth=("user", "password")`` tuple: https://requests.readthedocs.io/en/latest/user/authentication/
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


def _fresh() -> list[Form]:
    """Issue 29's second held-out set: credential formats as their vendors document them, in the
    contexts they take in coding sessions, none a form of :data:`CORPUS` or :data:`HELD_OUT`.
    Written (and committed) before the rules were changed for issue 29 and never tuned on. Its own
    random generator, so the other two sets are unchanged."""
    rng = random.Random(20261125)
    forms: list[Form] = []

    def pick(alphabet: str, n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    def password() -> str:
        return pick(string.ascii_letters, 5) + pick(string.digits, 2) + pick("#%*-_!", 1) + pick(ALNUM, 4)

    def add(name: str, template: str, *values: str, secrets: tuple[str, ...] | None = None) -> None:
        """A one-message form; its secrets are all the values unless named (an id or a public
        certificate beside the secret is not one)."""
        forms.append(Form(name, (template.format(*values),), values if secrets is None else secrets))

    bech32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
    add("gitlab runner token on register", "gitlab-runner register --non-interactive --url https://gitlab.com --token {} --executor docker",
        "glrt-" + pick(ALNUM + "_-", 20))
    add("slack app-level token in bolt", 'SocketModeHandler(app, "{}").start()',
        "xapp-1-A" + pick(UPPER, 10) + "-" + pick(string.digits, 13) + "-" + pick(HEX, 64))
    add("digitalocean token on --access-token", "doctl compute droplet list --access-token {}", "dop_v1_" + pick(HEX, 64))
    add("linear key as the whole Authorization header",
        "curl -X POST https://api.linear.app/graphql -H 'Content-Type: application/json' -H 'Authorization: {}' --data '{{\"query\": \"{{ viewer {{ id }} }}\"}}'",
        "lin_api_" + pick(ALNUM, 40))
    add("okta SSWS header", 'curl -H "Authorization: SSWS {}" https://dev-123456.okta.com/api/v1/users', "00" + pick(ALNUM + "_-", 40))
    add("age identity file", "$ cat key.txt\n# created: 2026-11-25T10:30:45+01:00\n# public key: age1" + pick(bech32.lower(), 58) + "\n{}",
        "AGE-SECRET-KEY-1" + pick(bech32, 58))
    sig = base64.b64encode(bytes(rng.randrange(256) for _ in range(32))).decode().replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
    add("azure SAS url signature",
        'azcopy copy ./dump.tar "https://shopdata.blob.core.windows.net/backups/dump.tar?sv=2022-11-02&ss=b&srt=co&sp=rwc&se=2026-12-01T00:00:00Z&spr=https&sig={}"',
        sig)
    add("tailscale auth key", "tailscale up --authkey={} --ssh", "tskey-auth-k" + pick(ALNUM, 11) + "-" + pick(ALNUM, 33))
    add("pgpass line", "echo 'db.internal:5432:shop:app:{}' >> ~/.pgpass && chmod 600 ~/.pgpass", password())
    add("oracle jdbc url with user/password", 'String url = "jdbc:oracle:thin:scott/{}@//db.internal:1521/ORCLPDB1";', password())
    add("sql server jdbc url with password=", "spring.datasource.url=jdbc:sqlserver://db.internal:1433;databaseName=shop;user=sa;password={};encrypt=true",
        password())
    add("postman cli login", "postman login --with-api-key {}", "PMAK-" + pick(HEX, 24) + "-" + pick(HEX, 34))
    add("grafana token as terraform auth", 'provider "grafana" {{\n  url  = "https://shop.grafana.net/"\n  auth = "{}"\n}}',
        "glsa_" + pick(ALNUM, 32) + "_" + pick(HEX, 8))
    add("new relic license key in newrelic.yml", "common: &default_settings\n  license_key: '{}'\n  app_name: shop-api", pick(HEX, 36) + "NRAL")
    add("notion secret in Client(auth=)", 'notion = Client(auth="{}")', "ntn_" + pick(string.digits, 11) + pick(ALNUM, 35))
    add("cargo login token", "cargo login {}", "cio" + pick(ALNUM, 32))
    add("cloudflare X-Auth-Key header",
        'curl https://api.cloudflare.com/client/v4/zones -H "X-Auth-Email: ops@example.com" -H "X-Auth-Key: {}"',
        "cfk_" + pick(ALNUM, 40) + pick(HEX, 8))
    api_key_secret = pick(ALNUM, 32)
    add("twilio api key secret, positional", 'client = Client("SK{}", "{}", "AC{}")', pick(HEX, 32), api_key_secret, pick(HEX, 32),
        secrets=(api_key_secret,))
    add("htpasswd -b", "htpasswd -b -c /etc/nginx/.htpasswd admin {}", password())
    pw = password()
    add("keytool -storepass", "keytool -genkeypair -alias app -keyalg RSA -keystore app.p12 -storepass {} -keypass {}", pw, pw,
        secrets=(pw,))
    add("postgres CREATE ROLE PASSWORD", "CREATE ROLE app WITH LOGIN PASSWORD '{}';", password())
    add("mysql IDENTIFIED BY", "CREATE USER 'shop'@'%' IDENTIFIED BY '{}';", password())
    add("az login service principal -p", "az login --service-principal -u 3f2c9a1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b -p {} --tenant contoso.onmicrosoft.com",
        pick(ALNUM, 3) + "8Q~" + pick(ALNUM + "_.~-", 34))
    add("mongosh db.auth", 'use admin\ndb.auth("siteAdmin", "{}")', password())
    add("vault login with an s. token", "vault login {}", "s." + pick(ALNUM, 24))
    add("doppler service token set", "doppler configure set token {} --scope /srv/shop", "dp.st.prd." + pick(ALNUM, 40))
    add("pypi token in .pypirc", "[pypi]\n  username = __token__\n  password = {}\n",
        "pypi-AgEIcHlwaS5vcmc" + pick(ALNUM + "_-", 150))
    groups = [pick(string.ascii_lowercase, 4) for _ in range(4)]
    forms.append(Form("google app password in prose", (f"the gmail app password for the deploy bot is {' '.join(groups)}",), tuple(groups)))
    key_pem = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(pick(B64, 64) for _ in range(6)) + "\n-----END RSA PRIVATE KEY-----\n"
    key_data = base64.b64encode(key_pem.encode()).decode()
    add("kubeconfig client-key-data",
        "users:\n- name: admin\n  user:\n    client-certificate-data: {}\n    client-key-data: {}",
        base64.b64encode(("-----BEGIN CERTIFICATE-----\n" + pick(B64, 64) + "\n-----END CERTIFICATE-----\n").encode()).decode(),
        key_data, secrets=(key_data,))
    add("requests auth tuple", 'r = requests.get("https://ci.example.com/api/json", auth=("deploy", "{}"))', password())
    return forms


CORPUS = _forms()
HELD_OUT = _held_out()
FRESH = _fresh()
ALL_SECRETS = tuple(s for form in CORPUS + HELD_OUT for s in form.secrets)
