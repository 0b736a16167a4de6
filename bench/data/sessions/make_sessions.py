"""Writes the session-memory benchmark set: 14 hand-written Claude Code sessions of one project
("shop", a web shop backend), as transcripts in Claude Code's JSONL shape (``<session id>.jsonl``).

The conversations below are written by hand; this script only wraps them in the transcript format
(uuid chains, timestamps, tool_use/tool_result blocks, attachments, queue operations, summary lines,
a compaction). Run it to regenerate the .jsonl files: ``python bench/data/sessions/make_sessions.py``.
questions.json holds the judged questions over these sessions.
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).parent
CWD = "/home/dev/shop"
NS = uuid.UUID("6f1d2c3b-4a59-4e6f-8a7b-9c0d1e2f3a4b")

# Each turn: ("u", text) a prompt; ("a", text, [tool calls]) an answer, a tool call being
# (name, input, result text, is_error); ("compact", summary) a compaction; ("summary", title) a summary line.
SESSIONS: list[dict] = [
    {
        "id": "s01-payments-retry",
        "start": "2026-09-01T09:10:00",
        "turns": [
            ("summary", "Retry with backoff for the payments client"),
            ("u", "The payments provider returns 503 during their deploys and our checkout fails hard. Add retries to src/payments/client.py."),
            ("a", "Let me read the client.", [("Read", {"file_path": "src/payments/client.py"}, "class PaymentsClient:\n    def charge(self, order, amount):\n        return self.http.post('/charges', json={...})", False)]),
            ("a", "There is no retry. We decided to use exponential backoff with full jitter: base 200 ms, capped at 8 seconds, at most 5 attempts. Fixed delays make every checkout worker retry at the same instant and prolong the provider's outage.", [("Edit", {"file_path": "src/payments/client.py", "old_string": "return self.http.post", "new_string": "return retry(lambda: self.http.post"}, "The file src/payments/client.py has been updated successfully.", False)]),
            ("u", "Is it safe to retry a charge? I don't want to bill customers twice."),
            ("a", "Only with an idempotency key. The provider deduplicates requests carrying the same Idempotency-Key header for 24 hours, so the client now sends the order id plus attempt-independent suffix as the key. Without it a retried timeout could create a second charge.", [("Edit", {"file_path": "src/payments/client.py", "old_string": "json={...}", "new_string": "json={...}, headers={'Idempotency-Key': f'order-{order.id}'}"}, "The file src/payments/client.py has been updated successfully.", False)]),
            ("a", "Running the payments tests.", [("Bash", {"command": "pytest -q tests/payments", "description": "Run payments tests"}, "...F\nFAILED tests/payments/test_client.py::test_retries_stop_after_five - assert 6 == 5\n1 failed, 3 passed", True)]),
            ("a", "The fix was an off-by-one: the loop counted retries instead of attempts, so it made six calls. Counting attempts from one makes it stop after five.", [("Edit", {"file_path": "src/payments/retry.py", "old_string": "for n in range(max_attempts + 1)", "new_string": "for n in range(1, max_attempts + 1)"}, "The file src/payments/retry.py has been updated successfully.", False), ("Bash", {"command": "pytest -q tests/payments"}, "4 passed in 0.31s", False)]),
            ("u", "Great. Also, 4xx errors should not be retried, right?"),
            ("a", "Right: only 502, 503, 504 and connection timeouts are retried. A 402 card_declined or 422 validation error is final and goes straight back to the checkout page.", []),
        ],
    },
    {
        "id": "s02-celery-beat",
        "start": "2026-09-03T14:00:00",
        "turns": [
            ("u", "Move the nightly order export from the system crontab to Celery beat (jobs/export_orders.py)."),
            ("a", "I'll look at the crontab entry and the job module.", [("Grep", {"pattern": "export_orders", "path": CWD}, "deploy/crontab\njobs/export_orders.py\ntests/test_export_orders.py", False)]),
            ("a", "The cron entry runs `python -m jobs.export_orders` at 02:30 on one VM; if that VM is down the export silently does not happen.", [("Read", {"file_path": "deploy/crontab"}, "30 2 * * * app python -m jobs.export_orders", False)]),
            ("compact", "Analysis: the user wants the order export scheduled by Celery beat instead of cron.\nSummary:\n1. Primary request: migrate jobs/export_orders.py from cron to a Celery beat periodic task.\n2. Key decisions: we decided to keep the export idempotent by writing to a dated S3 key (exports/orders/YYYY-MM-DD.csv), so a double run after a deploy overwrites instead of duplicating. The beat schedule lives in config/celery_beat.py, never in the task module.\n3. Files: jobs/export_orders.py (now a shared_task), config/celery_beat.py (crontab(hour=2, minute=30)), deploy/crontab (entry removed).\n4. Pending: run it once in staging."),
            ("u", "ok run it in staging"),
            ("a", "Running the task in staging.", [("Bash", {"command": "make staging-run TASK=jobs.export_orders.export_orders"}, "task export_orders succeeded in 41.2s: 18412 orders written to s3://shop-exports/orders/2026-09-03.csv", False)]),
            ("a", "The staging run wrote 18,412 orders in 41 seconds. Beat runs with a single scheduler replica; running two beat processes would enqueue the export twice, which the dated key makes harmless but wasteful.", []),
        ],
    },
    {
        "id": "s03-search-timeout",
        "start": "2026-09-05T10:20:00",
        "turns": [
            ("summary", "Catalog search page timing out"),
            ("u", "The search page times out for the big furniture catalog. Find out why."),
            ("a", "Let me get the query plan.", [("Bash", {"command": "psql shop -c \"EXPLAIN ANALYZE SELECT * FROM products WHERE category_id = 42 ORDER BY popularity DESC LIMIT 48\""}, "Seq Scan on products  (cost=0.00..412345.00 rows=88000) (actual time=9012.4..9013.1)\nPlanning Time: 0.2 ms\nExecution Time: 9013.9 ms", False)]),
            ("a", "The root cause is a sequential scan over 4 million products: there is no index on products.category_id, so every category page reads the whole table. A composite index on (category_id, popularity DESC) serves both the filter and the sort.", []),
            ("u", "Add the migration then. Production can't lock the table though."),
            ("a", "Then the index must be created with CREATE INDEX CONCURRENTLY, which cannot run inside a transaction: the migration sets atomic = False.", [("Write", {"file_path": "migrations/0042_products_category_popularity.py", "content": "..."}, "File created successfully at: migrations/0042_products_category_popularity.py", False)]),
            ("a", "Checking the plan with the index.", [("Bash", {"command": "psql shop -c \"EXPLAIN ANALYZE ...\""}, "Index Scan using products_category_popularity on products (actual time=0.05..38.2)\nExecution Time: 38.6 ms", False)]),
            ("a", "The page query went from 9 seconds to 39 milliseconds. Convention for this codebase: every new index on a large table goes in its own non-atomic migration using CONCURRENTLY.", []),
        ],
    },
    {
        "id": "s04-secrets-vault",
        "start": "2026-09-08T08:00:00",
        "turns": [
            ("u", "settings.py still has the database password and the Stripe key hardcoded. Move them out."),
            ("a", "Reading settings.", [("Read", {"file_path": "shop/settings.py"}, "DATABASES = {'default': {'PASSWORD': os.environ.get('DB_PASSWORD', 'devpass')}}\nSTRIPE_KEY = 'sk_live_' + '...'", False)]),
            ("a", "We decided to load every credential from HashiCorp Vault at process start through the vault agent sidecar, which renders them to /run/secrets; settings.py reads those files and never falls back to a default in production.", [("Edit", {"file_path": "shop/settings.py", "old_string": "os.environ.get('DB_PASSWORD', 'devpass')", "new_string": "read_secret('db_password')"}, "The file shop/settings.py has been updated successfully.", False)]),
            ("u", "What about local development?"),
            ("a", "Locally read_secret falls back to a .env file that is gitignored, and the pre-commit hook runs detect-secrets so a key pasted into code is caught before it is committed.", [("Write", {"file_path": ".pre-commit-config.yaml", "content": "..."}, "File created successfully at: .pre-commit-config.yaml", False)]),
            ("a", "The old Stripe key was in git history, so it has to be rotated in the Stripe dashboard; removing it from the file does not remove it from the history.", []),
        ],
    },
    {
        "id": "s05-flaky-checkout-test",
        "start": "2026-09-10T16:45:00",
        "turns": [
            ("summary", "Flaky checkout test around midnight"),
            ("u", "test_order_confirmation_date fails on CI every night but passes locally. Why?"),
            ("a", "Let me look at the test and the code under test.", [("Read", {"file_path": "tests/checkout/test_confirmation.py"}, "def test_order_confirmation_date():\n    order = make_order()\n    assert order.confirmation_date == date.today()", False), ("Read", {"file_path": "shop/checkout/models.py"}, "self.confirmation_date = timezone.now().date()", False)]),
            ("a", "It turned out the CI runners use UTC while the test compares against date.today() in the container's local time zone (Europe/Berlin): between 22:00 and 24:00 UTC the two dates differ by a day. timezone.now() is aware and in UTC, date.today() is naive local time.", []),
            ("u", "So how do we make it deterministic?"),
            ("a", "Freeze the clock with time-machine at a fixed instant just before midnight and compare against timezone.localdate(), the project's business date. From now on tests never call date.today() or datetime.now(); they use the frozen clock fixture.", [("Edit", {"file_path": "tests/checkout/test_confirmation.py", "old_string": "date.today()", "new_string": "timezone.localdate()"}, "The file tests/checkout/test_confirmation.py has been updated successfully.", False), ("Bash", {"command": "pytest -q tests/checkout -p no:randomly"}, "12 passed in 1.02s", False)]),
        ],
    },
    {
        "id": "s06-redis-product-cache",
        "start": "2026-09-12T11:00:00",
        "turns": [
            ("u", "Product detail pages hit the database 30 times per request. Cache them in Redis."),
            ("a", "Looking at the view.", [("Read", {"file_path": "shop/catalog/views.py"}, "def product_detail(request, slug):\n    product = Product.objects.get(slug=slug)\n    ...", False)]),
            ("a", "Let's go with caching the rendered product payload (not the HTML) in Redis under product:{id}:v{schema}, TTL 300 seconds. The TTL bounds staleness even if an invalidation is missed.", [("Edit", {"file_path": "shop/catalog/views.py", "old_string": "product = Product.objects.get(slug=slug)", "new_string": "payload = product_cache.get_or_build(slug)"}, "The file shop/catalog/views.py has been updated successfully.", False)]),
            ("u", "And when the price changes? Customers must not see an old price in the basket."),
            ("a", "A post_save signal on Price deletes the product's cache key, and the basket always reads prices from the database, never from the cache, so a stale cached page can show an old price but the charge uses the current one.", [("Write", {"file_path": "shop/catalog/signals.py", "content": "..."}, "File created successfully at: shop/catalog/signals.py", False)]),
            ("a", "Load test: p95 of the product page went from 410 ms to 35 ms at 200 requests per second, and database queries per request from 30 to 1 on a cache hit.", [("Bash", {"command": "k6 run loadtests/product_page.js"}, "http_req_duration p(95)=35.2ms  iterations=60000", False)]),
        ],
    },
    {
        "id": "s07-rate-limiting",
        "start": "2026-09-15T09:30:00",
        "turns": [
            ("summary", "Rate limiting for the public API"),
            ("u", "A partner is scraping the public API with 2000 requests a minute. We need rate limiting per API key."),
            ("a", "We chose a token bucket per API key in Redis: capacity 100, refill 100 per minute, implemented as a Lua script so the check-and-decrement is atomic across the API replicas.", [("Write", {"file_path": "shop/api/ratelimit.py", "content": "..."}, "File created successfully at: shop/api/ratelimit.py", False)]),
            ("u", "What does the client see when it is limited?"),
            ("a", "HTTP 429 Too Many Requests with a Retry-After header in seconds and X-RateLimit-Remaining on every response, so well-behaved clients can slow down before they hit the limit.", [("Edit", {"file_path": "shop/api/middleware.py", "old_string": "return self.get_response(request)", "new_string": "return limited_response(bucket) if bucket.empty else self.get_response(request)"}, "The file shop/api/middleware.py has been updated successfully.", False)]),
            ("u", "Should internal services be limited too?"),
            ("a", "No: requests signed with the internal service token skip the limiter, but they are still counted in the metrics so a runaway internal job shows up on the dashboard.", [("Bash", {"command": "pytest -q tests/api/test_ratelimit.py"}, "7 passed in 0.88s", False)]),
        ],
    },
    {
        "id": "s08-postgres-upgrade",
        "start": "2026-09-18T07:00:00",
        "turns": [
            ("u", "Plan the upgrade of the production database from PostgreSQL 12 to 16 with as little downtime as possible."),
            ("a", "Two options: pg_upgrade in place (fast, but needs a maintenance window of roughly 20 minutes for our 800 GB and has no easy way back) or logical replication to a new 16 cluster, then a switchover.", []),
            ("a", "We decided on logical replication to a fresh PostgreSQL 16 cluster: it keeps the old primary untouched as the rollback path and the cutover is a DNS switch of about 30 seconds. Sequences are not replicated, so they are synced right before the switch.", [("Write", {"file_path": "docs/runbooks/pg16-upgrade.md", "content": "..."}, "File created successfully at: docs/runbooks/pg16-upgrade.md", False)]),
            ("u", "Anything that breaks with logical replication?"),
            ("a", "Tables without a primary key cannot be replicated for updates and deletes; audit_log_archive has none, so it gets REPLICA IDENTITY FULL. Large objects are not replicated either, but we don't use them.", [("Bash", {"command": "psql shop -c \"SELECT relname FROM pg_class c LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary WHERE c.relkind = 'r' AND i.indrelid IS NULL\""}, "audit_log_archive\n(1 row)", False)]),
        ],
    },
    {
        "id": "s09-structured-logging",
        "start": "2026-09-22T13:15:00",
        "turns": [
            ("summary", "Structured JSON logging with request ids"),
            ("u", "Our logs are plain text and impossible to query in Loki. Switch to structured logging."),
            ("a", "I'll use structlog with the JSON renderer in production and the console renderer in development, configured once in shop/logging.py.", [("Write", {"file_path": "shop/logging.py", "content": "..."}, "File created successfully at: shop/logging.py", False)]),
            ("a", "A middleware binds a request_id (taken from the X-Request-ID header set by the load balancer, or a new uuid4) to every log line of the request, and returns it in the response so support can find the logs of a customer's failed checkout.", [("Write", {"file_path": "shop/middleware/request_id.py", "content": "..."}, "File created successfully at: shop/middleware/request_id.py", False)]),
            ("u", "Make sure we are not logging anything sensitive."),
            ("a", "A structlog processor masks card numbers (anything that passes the Luhn check), email addresses and the Authorization header. The rule is: never log a full payment card number or a customer password, even at debug level.", [("Bash", {"command": "pytest -q tests/test_logging.py"}, "5 passed in 0.12s", False)]),
        ],
    },
    {
        "id": "s10-vite-migration",
        "start": "2026-09-25T10:00:00",
        "turns": [
            ("u", "The storefront webpack build takes 4 minutes. Can we move to Vite?"),
            ("a", "Checking the webpack config for things Vite handles differently.", [("Read", {"file_path": "frontend/webpack.config.js"}, "module.exports = { entry: './src/index.tsx', plugins: [new DefinePlugin({ 'process.env.API_URL': ... })] }", False)]),
            ("a", "The main incompatibility is environment variables: webpack injected process.env.API_URL, Vite exposes only variables prefixed VITE_ through import.meta.env. I renamed them to VITE_API_URL and VITE_SENTRY_DSN.", [("Edit", {"file_path": "frontend/src/config.ts", "old_string": "process.env.API_URL", "new_string": "import.meta.env.VITE_API_URL"}, "The file frontend/src/config.ts has been updated successfully.", False)]),
            ("a", "Build comparison.", [("Bash", {"command": "cd frontend && npm run build"}, "vite v5.4.0 building for production...\n✓ built in 38.21s\ndist/assets/index-4f2a.js  312.40 kB │ gzip: 98.10 kB", False)]),
            ("a", "Production build: 4 minutes down to 38 seconds, and the main bundle from 540 kB to 312 kB because Vite's Rollup build tree-shakes lodash-es. The dev server starts in under a second.", []),
        ],
    },
    {
        "id": "s11-ses-bounces",
        "start": "2026-09-29T15:40:00",
        "turns": [
            ("summary", "Handling SES email bounces"),
            ("u", "Amazon SES warned us our bounce rate is 6%. We keep emailing addresses that bounced."),
            ("a", "SES publishes bounces and complaints to an SNS topic; we subscribe an HTTPS endpoint /webhooks/ses that marks the customer's address as undeliverable after a permanent bounce, and the mailer skips undeliverable addresses.", [("Write", {"file_path": "shop/notifications/ses_webhook.py", "content": "..."}, "File created successfully at: shop/notifications/ses_webhook.py", False)]),
            ("u", "Couldn't anyone post fake bounces to that webhook?"),
            ("a", "Yes, unless we verify the SNS message signature: the handler downloads the signing certificate only from an sns.<region>.amazonaws.com URL, checks the signature over the canonical message, and rejects anything else with 403.", [("Edit", {"file_path": "shop/notifications/ses_webhook.py", "old_string": "def handle(request):", "new_string": "def handle(request):\n    verify_sns_signature(message)"}, "The file shop/notifications/ses_webhook.py has been updated successfully.", False)]),
            ("a", "Transient (soft) bounces like a full mailbox are only counted; the address is suppressed after three soft bounces in 30 days.", []),
        ],
    },
    {
        "id": "s13-checkout-refactor",
        "start": "2026-10-06T08:30:00",
        "turns": [
            ("summary", "Checkout refactor: order states, VAT rounding, API docs"),
            ("u", "shop/checkout/views.py is 1,900 lines. Let's split the checkout into a service layer and clean up the order status handling while we are at it."),
            ("a", "Reading the view module to see what lives where.", [("Read", {"file_path": "shop/checkout/views.py"}, "def checkout(request):\n    # 1,900 lines of validation, pricing, payment and email", False)]),
            ("a", "The view mixes four jobs: basket validation, pricing (discounts, VAT, shipping), payment and confirmation emails. I'll move each into shop/checkout/services/ as plain functions that take a Basket and return values, so the view only parses the request and renders. The views keep their URLs, so nothing changes for the frontend.", [("Write", {"file_path": "shop/checkout/services/pricing.py", "content": "..."}, "File created successfully at: shop/checkout/services/pricing.py", False), ("Write", {"file_path": "shop/checkout/services/validation.py", "content": "..."}, "File created successfully at: shop/checkout/services/validation.py", False)]),
            ("u", "Order status is a free text field today and we have orders that are both 'shipped' and 'cancelled'. Can we make that impossible?"),
            ("a", "We decided to model the order lifecycle as an explicit state machine: pending -> paid -> packed -> shipped -> delivered, with cancelled reachable only from pending or paid and refunded only from delivered or cancelled-after-payment. Transitions go through Order.transition(to), which raises InvalidTransition for anything else and records who changed it and when in order_status_history.", [("Write", {"file_path": "shop/orders/state.py", "content": "..."}, "File created successfully at: shop/orders/state.py", False)]),
            ("a", "A data migration maps the old free text values; 214 orders had contradictory values and are listed in a report for the support team instead of being guessed.", [("Bash", {"command": "python manage.py migrate orders 0031"}, "Applying orders.0031_status_state_machine... OK (214 orders need review: see reports/order_status_conflicts.csv)", False)]),
            ("u", "While you're in pricing: finance says our VAT totals are off by a cent on some invoices."),
            ("a", "Found it in the pricing service: VAT was rounded per line item and then summed, while the invoice system rounds the total once. With three items at 19% VAT the per-line rounding drifts by up to a cent and a half. The fix was to keep line amounts as Decimal without rounding, compute VAT on the invoice total and round once with ROUND_HALF_UP, which is what the tax office expects for invoices.", [("Edit", {"file_path": "shop/checkout/services/pricing.py", "old_string": "sum(round(line.vat, 2) for line in lines)", "new_string": "(total_net * rate).quantize(CENT, ROUND_HALF_UP)"}, "The file shop/checkout/services/pricing.py has been updated successfully.", False)]),
            ("a", "Never use float for money anywhere in pricing: every amount is a Decimal with two places at the boundaries and full precision inside the computation.", [("Bash", {"command": "pytest -q tests/checkout/test_pricing.py"}, "23 passed in 0.61s", False)]),
            ("u", "The mobile team keeps asking what the checkout endpoints return. Can we generate API docs?"),
            ("a", "Let's go with drf-spectacular: it generates an OpenAPI 3 schema from the serializers, served at /api/schema/ with Swagger UI at /api/docs/. I annotated the checkout serializers so the error responses (402 payment declined, 409 basket changed, 422 validation) appear in the schema too.", [("Edit", {"file_path": "shop/urls.py", "old_string": "urlpatterns = [", "new_string": "urlpatterns = [\n    path('api/schema/', SpectacularAPIView.as_view()),"}, "The file shop/urls.py has been updated successfully.", False)]),
            ("a", "The schema is checked in CI: a test regenerates it and fails when it differs from docs/openapi.yaml, so an API change without an updated schema cannot be merged.", [("Bash", {"command": "pytest -q tests/test_openapi_schema.py"}, "1 passed in 2.10s", False)]),
            ("u", "How do we roll the new checkout out safely?"),
            ("a", "Behind a feature flag, new_checkout, evaluated per customer id with a percentage rollout: 5% on day one, watching the payment error rate and checkout conversion on the dashboard, then 25%, 50%, 100% over a week. The old code path stays until the flag has been at 100% for two weeks.", []),
        ],
    },
    {
        "id": "s14-paypal-integration",
        "start": "2026-10-08T13:00:00",
        "turns": [
            ("u", "Product wants PayPal as a second payment method. Walk me through what we need."),
            ("a", "Four parts: creating PayPal orders at checkout, capturing them after approval, receiving PayPal webhooks for captures and refunds, and reconciling PayPal settlements with our orders. The Orders v2 REST API covers the first two; the JavaScript SDK renders the PayPal button on the payment step.", []),
            ("a", "The PaymentProvider interface in shop/payments/providers.py already abstracts the card provider, so PayPal becomes a second implementation: create_payment, capture, refund. Checkout picks the provider from the chosen method.", [("Write", {"file_path": "shop/payments/paypal.py", "content": "..."}, "File created successfully at: shop/payments/paypal.py", False)]),
            ("u", "How do we test this without real money?"),
            ("a", "PayPal has a sandbox with its own REST app and test buyer accounts. The sandbox client id and secret come from the vault like every other credential; the settings pick api-m.sandbox.paypal.com when PAYPAL_ENV is sandbox. The integration tests replay recorded sandbox responses with vcrpy so CI never calls PayPal.", [("Bash", {"command": "pytest -q tests/payments/test_paypal.py"}, "9 passed in 1.44s", False)]),
            ("u", "Customers pay in CHF and SEK too. What does PayPal do with currencies?"),
            ("a", "PayPal accepts the order in the customer's currency, and our PayPal account holds balances in EUR only, so PayPal converts on capture at its own rate. We decided to always send the amount in the currency shown to the customer and record the EUR amount PayPal reports in the capture response, so accounting books what we actually received, not our own conversion.", []),
            ("u", "What about refunds?"),
            ("a", "Refunds go through the capture id: POST /v2/payments/captures/{id}/refund with the amount and the same currency as the capture. A partial refund is allowed several times up to the captured amount. The refund is final only when the PAYMENT.CAPTURE.REFUNDED webhook arrives; until then the order shows refund pending.", [("Edit", {"file_path": "shop/payments/paypal.py", "old_string": "def refund(self, payment, amount):", "new_string": "def refund(self, payment, amount):\n    return self._post(f'/v2/payments/captures/{payment.capture_id}/refund', ...)"}, "The file shop/payments/paypal.py has been updated successfully.", False)]),
            ("u", "And the webhooks, are they signed like the SES ones?"),
            ("a", "Yes: every PayPal webhook is verified by calling the verify-webhook-signature endpoint with the transmission id, time, cert url, auth algo and signature headers plus our webhook id; anything not verified is rejected with 400 and logged. Webhook handling is idempotent on the event id because PayPal retries deliveries for up to three days.", [("Write", {"file_path": "shop/payments/paypal_webhooks.py", "content": "..."}, "File created successfully at: shop/payments/paypal_webhooks.py", False)]),
            ("u", "Last thing: finance needs to match PayPal payouts with orders."),
            ("a", "A nightly reconciliation job downloads the PayPal settlement report over SFTP, matches each transaction to an order by the invoice id we send with every PayPal order, and writes mismatches (missing orders, amount differences above one cent, unknown transactions) to the finance dashboard. It runs on Celery beat at 04:00, after PayPal publishes the report.", [("Write", {"file_path": "jobs/reconcile_paypal.py", "content": "..."}, "File created successfully at: jobs/reconcile_paypal.py", False)]),
        ],
    },
    {
        "id": "s12-inventory-oversell",
        "start": "2026-10-02T09:00:00",
        "turns": [
            ("u", "During the flash sale we sold 130 units of a chair we had 100 of. How?"),
            ("a", "Reading the reservation code.", [("Read", {"file_path": "shop/inventory/reserve.py"}, "stock = Stock.objects.get(sku=sku)\nif stock.available >= qty:\n    stock.available -= qty\n    stock.save()", False)]),
            ("a", "The bug was a race condition: two checkouts read available = 1 at the same time, both pass the check and both save. The read-check-write is not atomic.", []),
            ("u", "Fix it without slowing checkout down too much."),
            ("a", "The fix was a single conditional UPDATE: UPDATE stock SET available = available - qty WHERE sku = %s AND available >= qty, and the reservation succeeds only if one row was updated. No row lock is held between the read and the write, so checkout latency is unchanged.", [("Edit", {"file_path": "shop/inventory/reserve.py", "old_string": "stock.save()", "new_string": "updated = Stock.objects.filter(sku=sku, available__gte=qty).update(available=F('available') - qty)"}, "The file shop/inventory/reserve.py has been updated successfully.", False)]),
            ("a", "A concurrency test now runs 50 threads reserving the last 10 units and asserts exactly 10 succeed.", [("Bash", {"command": "pytest -q tests/inventory/test_reserve_concurrency.py"}, "1 passed in 2.41s", False)]),
        ],
    },
]


def _uid(session: str, n: int) -> str:
    return str(uuid.uuid5(NS, f"{session}:{n}"))


def _base(session_id: str, when: datetime, parent: str | None, uid: str) -> dict:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "uuid": uid,
        "timestamp": when.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        "userType": "external",
        "entrypoint": "cli",
        "cwd": CWD,
        "sessionId": session_id,
        "version": "2.1.197",
        "gitBranch": "main",
    }


def _path(value: object) -> object:
    if isinstance(value, str) and value and not value.startswith("/") and "/" in value and " " not in value:
        return f"{CWD}/{value}"
    return value


def render(session: dict) -> str:
    sid = str(uuid.uuid5(NS, session["id"]))
    when = datetime.fromisoformat(session["start"]).replace(tzinfo=timezone.utc)
    lines: list[dict] = []
    parent = None
    n = 0
    tool_n = 0

    def tick(seconds: int = 7) -> datetime:
        nonlocal when
        when += timedelta(seconds=seconds)
        return when

    for turn in session["turns"]:
        kind = turn[0]
        if kind == "summary":
            lines.append({"type": "summary", "summary": turn[1], "leafUuid": _uid(session["id"], 999)})
            continue
        n += 1
        uid = _uid(session["id"], n)
        if kind == "u":
            lines.append({"type": "queue-operation", "operation": "enqueue", "timestamp": tick(1).isoformat(), "sessionId": sid, "content": turn[1]})
            entry = _base(sid, tick(1), parent, uid) | {"type": "user", "message": {"role": "user", "content": turn[1]}, "permissionMode": "default", "promptSource": "cli"}
            lines.append(entry)
            if n == 1:
                lines.append(_base(sid, tick(0), uid, _uid(session["id"], 500)) | {"type": "attachment", "attachment": {"type": "hook_additional_context", "content": ["autology — project memory: 12 knowledge node(s)."], "hookName": "SessionStart:startup"}})
            parent = uid
        elif kind == "compact":
            lines.append(_base(sid, tick(3600), parent, _uid(session["id"], 600 + n)) | {"type": "system", "subtype": "compact_boundary", "content": "Conversation compacted", "level": "info", "compactMetadata": {"trigger": "auto", "preTokens": 161000}})
            text = "This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\n" + turn[1]
            lines.append(_base(sid, tick(1), _uid(session["id"], 600 + n), uid) | {"type": "user", "message": {"role": "user", "content": text}, "isCompactSummary": True, "isVisibleInTranscriptOnly": True})
            parent = uid
        else:
            text, tools = turn[1], turn[2]
            content: list[dict] = [{"type": "text", "text": text}] if text else []
            calls = []
            for name, data, result, error in tools:
                tool_n += 1
                tool_id = f"toolu_{session['id'][:3]}{tool_n:04d}"
                content.append({"type": "tool_use", "id": tool_id, "name": name, "input": {k: _path(v) if k in ("file_path", "path") else v for k, v in data.items()}})
                calls.append((tool_id, result, error))
            lines.append(_base(sid, tick(9), parent, uid) | {"type": "assistant", "message": {"id": f"msg_{uid[:8]}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": content, "stop_reason": "tool_use" if calls else "end_turn", "usage": {"input_tokens": 1200, "output_tokens": 180}}})
            parent = uid
            for tool_id, result, error in calls:
                n += 1
                rid = _uid(session["id"], n)
                lines.append(_base(sid, tick(2), parent, rid) | {"type": "user", "message": {"role": "user", "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": result, "is_error": error}]}, "toolUseResult": {"stdout": result, "stderr": "", "interrupted": False, "isImage": False}, "sourceToolAssistantUUID": uid})
                parent = rid
    lines.append({"type": "last-prompt", "lastPrompt": next(t[1] for t in session["turns"] if t[0] == "u"), "leafUuid": parent, "sessionId": sid})
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n"


def session_ids() -> dict[str, str]:
    """Short name -> session id (the transcript's file name)."""
    return {s["id"]: str(uuid.uuid5(NS, s["id"])) for s in SESSIONS}


if __name__ == "__main__":
    for session in SESSIONS:
        (HERE / f"{uuid.uuid5(NS, session['id'])}.jsonl").write_text(render(session))
    print(f"wrote {len(SESSIONS)} transcripts to {HERE}")
