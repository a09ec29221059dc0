// Package config holds the settings of `farebox serve`. Every setting is a
// flag with an environment twin (FAREBOX_*) and a working default, so
// `farebox serve` with nothing set starts a complete embedded service.
// Flags win over the environment. Secrets accept a *_FILE twin.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/mail"
	"net/netip"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/apperr"
	"github.com/farebox/farebox/internal/invoicedoc"
	"github.com/farebox/farebox/internal/retention"
	"github.com/farebox/farebox/internal/smtpmail"
	"github.com/farebox/farebox/internal/wallet"
)

// Config is the service configuration.
type Config struct {
	Addr        string
	DataDir     string
	DatabaseURL string
	IDPrefix    string
	PublicURL   string
	FontDir     string // fallback fonts of the invoice PDFs (pdf.SetFontDir)
	// The PDF renderer's queue (pdf.NewQueue in serve): renders that may wait
	// while one renders, and how long each may wait for its turn.
	PDFQueue      int
	PDFDeadline   time.Duration
	LogLevel      string
	LogFormat     string
	MaxBodyBytes  int64
	UsageLedger   bool
	LedgerFlush   bool
	LedgerJournal string // auto, journal or database (where a ledger row is committed)
	// LedgerCommit is when a database-mode ledger row is committed:
	// "deferred" (group commit within LedgerWindow / LedgerWindowRows,
	// after the response) or "before-response".
	LedgerCommit     string
	LedgerWindow     time.Duration
	LedgerWindowRows int
	DBMaxConns       int
	Timezone         string
	ShutdownTimeout  time.Duration
	RequestTimeout   time.Duration
	AuthCacheTTL     time.Duration
	// InspectMaxDataAge is how old the inspector app's cached keys,
	// revocation feed and blocklist may be before it refuses "valid".
	InspectMaxDataAge time.Duration
	// InspectWindowTolerance is the inspector app's clock tolerance on each
	// side of a dynamic code's window (0: none).
	InspectWindowTolerance time.Duration
	IdempotencyTTL         time.Duration
	// The books' checkpoints (docs/books.md): how often this instance
	// signs them (0: never) and the books key's file ("" : books-ed25519.pem
	// in DataDir).
	BooksCheckpointInterval time.Duration
	BooksKey                string
	Workers                 bool
	JobLease                time.Duration
	// DynamicWindow is the time window of dynamic tickets' barcodes
	// (docs/barcodes.md, "Dynamic barcodes"), 1..255 s.
	DynamicWindow time.Duration
	// Webhooks (docs/webhooks.md): workers of their own for deliveries,
	// and the on-premises setting that lets live endpoints use http and
	// reach loopback, private and link-local addresses.
	WebhookWorkers      int
	WebhookAllowPrivate bool
	WebhookTimeout      time.Duration
	RateLimit           float64
	RateBurst           int
	SessionKey          string // secret: HMAC key for session tokens
	PprofAddr           string
	MetricsAddr         string // --metrics-addr: /metrics on its own listener
	// Limits of requests without a key (httpapi.KeylessLimits).
	CapabilityRate, ClientRate   float64
	CapabilityBurst, ClientBurst int
	TrustedProxies               []netip.Prefix
	// RedisURL shares the rate limits and the sign-in throttle of every
	// instance through Redis (docs/scaling.md); empty: each instance keeps
	// its own. RedisPrefix starts every key farebox writes there.
	RedisURL, RedisPrefix string
	// AdminPasswordFile holds the operator console's user and argon2id
	// hash (farebox admin-password writes the line); empty: no console.
	AdminPasswordFile string
	// WalletBadges is the directory of Apple's and Google's official
	// add-to-wallet badges (web.LoadBadges); empty: farebox's own buttons.
	WalletBadges string

	// Wallets and inspection barcodes (docs/wallet.md).
	InspectionKeys string // key directory or comma-separated key files
	UICIssuer      string // RICS:KEYID:KEYFILE of the UIC 918.3 signer (docs/barcodes.md)
	VDVIssuer      string // ORG:PRODUCTORG:KEYFILE:CERTFILE of the VDV-KA signer (docs/barcodes.md)
	VDVRoot        string // the VDV root certificate file (unsigned CV certificate)
	VDVCAs         string // comma-separated VDV CA certificate files
	// BlocklistImport is the URL of an external blocklist imported every
	// BlocklistInterval (docs/blocklist.md), under the name BlocklistSource,
	// its signature checked with BlocklistKeys (a keys.json) when set.
	BlocklistImport   string
	BlocklistInterval time.Duration
	BlocklistSource   string
	BlocklistKeys     string
	// RecordsExportDir is where serve writes each day's records export
	// for the central reporting (docs/records.md, "The scheduled export");
	// empty: no scheduled export. RecordsRecipient is the age recipient
	// ("age1…" or @FILE), PseudonymKey the pseudonym key's file ("": the
	// database's), the same settings `farebox records export` reads.
	RecordsExportDir string
	RecordsRecipient string
	PseudonymKey     string
	// RecordsCatchUp is how many days back the scheduled export writes the
	// days no instance wrote (1: the previous day only).
	RecordsCatchUp int

	ApplePassCert   string
	ApplePassKey    string
	AppleWWDRCert   string
	ApplePassTypeID string
	AppleTeamID     string
	// APNs pushes Apple pass updates (--apns-*; docs/wallet.md "Apple
	// Wallet updates"); without APNsKey no device is pushed.
	APNsKey                     string
	APNsKeyID                   string
	APNsTeamID                  string
	APNsEndpoint                string
	GoogleServiceAccount        string
	GoogleIssuerID              string
	GoogleIssuerName            string
	GoogleOrigins               []string
	GoogleLogoURL               string
	GoogleWalletAPI             bool   // use the REST API (with a configured service account)
	GoogleAPIURL                string // walletobjects v1 base URL
	GoogleTokenURL              string // OAuth2 token URL ("" = the key file's token_uri)
	AdvertiseDevelopmentWallets bool
	AllowDevelopmentBarcodeKeys bool // start live with development UIC/VDV keys (docs/barcodes.md)
	// Brand is the operator's appearance on passes and in the rendering
	// engine (--brand-*), validated and its images read by Load; the
	// development brand when nothing is set.
	Brand         wallet.Brand
	BrandSettings wallet.BrandSettings

	// Transit (docs/departures.md).
	GTFSRefresh      time.Duration     // how often stored feed versions are polled
	Realtime         map[string]string // feed id → GTFS-RT source, overriding the import's
	RealtimeAlerts   map[string]string // feed id → GTFS-RT service alerts source
	RealtimeInterval time.Duration     // poll interval of configured realtime sources
	RealtimeMaxAge   time.Duration     // predictions older than this expire
	BoardCacheMB     int64             // MiB of encoded departure boards cached per instance; 0 turns the cache off
	GzipCacheMB      int64             // MiB of gzip-compressed boards kept for clients that accept gzip; 0 turns compression off

	// Invoicing: the issuing company (FAREBOX_SELLER_*) and payment terms.
	Seller      invoicedoc.Seller
	PaymentDays int
	// The delivery of documents to their buyers by e-mail (docs/invoicing.md,
	// "Delivery to the buyer"): the SMTP submission relay (nil: nothing is
	// sent) and the sender.
	SMTP        *smtpmail.Relay
	InvoiceFrom mail.Address

	// Retention of personal data by class (docs/privacy.md), refused at
	// start below the legal minimum.
	Retention retention.Policy
}

type setting struct {
	name, env, help string
	secret          bool
	def             string
}

func (c *Config) settings() []setting {
	return append([]setting{
		{name: "addr", env: "FAREBOX_ADDR", def: "127.0.0.1:8080", help: "listen address"},
		{name: "data-dir", env: "FAREBOX_DATA_DIR", def: "./farebox-data", help: "directory for the embedded SQLite database and generated keys"},
		{name: "database-url", env: "FAREBOX_DATABASE_URL", def: "", help: "postgres:// URL; empty uses embedded SQLite in the data dir", secret: true},
		{name: "id-prefix", env: "FAREBOX_ID_PREFIX", def: "farebox", help: "prefix of record identifiers (<prefix>-<kind>-<uuid>)"},
		{name: "public-url", env: "FAREBOX_PUBLIC_URL", def: "", help: "public base URL used in links (default http://<addr>)"},
		{name: "font-dir", env: "FAREBOX_FONT_DIR", def: "/usr/share/fonts", help: "directory of the Noto/Symbola fonts invoice PDFs use for scripts DejaVu lacks (Debian's layout; docs/invoicing.md)"},
		{name: "pdf-queue", env: "FAREBOX_PDF_QUEUE", def: "64", help: "PDF renders that may wait while one renders (one at a time per process); a render beyond them answers 503 renderer_busy with Retry-After"},
		{name: "pdf-deadline", env: "FAREBOX_PDF_DEADLINE", def: "10s", help: "how long a PDF render may wait for its turn before it answers 503 renderer_busy"},
		{name: "log-level", env: "FAREBOX_LOG_LEVEL", def: "info", help: "debug, info, warn or error"},
		{name: "log-format", env: "FAREBOX_LOG_FORMAT", def: "json", help: "json or text"},
		{name: "max-body-bytes", env: "FAREBOX_MAX_BODY_BYTES", def: "1048576", help: "largest accepted request body"},
		{name: "usage-ledger", env: "FAREBOX_USAGE_LEDGER", def: "true", help: "record every attributable request in the usage ledger"},
		{name: "usage-ledger-flush", env: "FAREBOX_USAGE_LEDGER_FLUSH", def: "false", help: "on PostgreSQL, also wait for the WAL flush of ledger commits (slower; see docs/operations.md)"},
		{name: "usage-ledger-journal", env: "FAREBOX_USAGE_LEDGER_JOURNAL", def: "auto", help: "where a request's ledger row is committed: journal (a file in --data-dir before the response, rolled into the database every second), database (group commit; when: --usage-ledger-commit), or auto (journal on SQLite, database on PostgreSQL; see docs/operations.md)"},
		{name: "usage-ledger-commit", env: "FAREBOX_USAGE_LEDGER_COMMIT", def: "deferred", help: "when a database-mode ledger row is committed: deferred (group commit within --usage-ledger-window after the response; a crash loses at most the open window) or before-response (the response waits for the commit; see docs/operations.md \"Billing\")"},
		{name: "usage-ledger-window", env: "FAREBOX_USAGE_LEDGER_WINDOW", def: "100ms", help: "deferred ledger: longest a row waits before its window is committed (at most 1m)"},
		{name: "usage-ledger-window-rows", env: "FAREBOX_USAGE_LEDGER_WINDOW_ROWS", def: "10000", help: "deferred ledger: a window is committed early once it holds this many rows (1 to 1000000)"},
		{name: "db-max-conns", env: "FAREBOX_DB_MAX_CONNS", def: "16", help: "database pool size (SQLite: reader pool)"},
		{name: "timezone", env: "FAREBOX_TIMEZONE", def: "Europe/Berlin", help: "time zone of calendar rules"},
		{name: "shutdown-timeout", env: "FAREBOX_SHUTDOWN_TIMEOUT", def: "20s", help: "how long graceful shutdown waits for in-flight requests"},
		{name: "request-timeout", env: "FAREBOX_REQUEST_TIMEOUT", def: "30s", help: "upper bound of one request's handling"},
		{name: "inspect-max-data-age", env: "FAREBOX_INSPECT_MAX_DATA_AGE", def: "24h", help: "how old the inspector app's cached keys, revocation feed and blocklist may be before it refuses to say valid (docs/inspect.md)"},
		{name: "inspect-window-tolerance", env: "FAREBOX_INSPECT_WINDOW_TOLERANCE", def: "30s", help: "the clock difference between a traveller's phone and the inspector app accepted on each side of a dynamic ticket's moving code (as farebox inspect --window-tolerance; 0s: none; at most 10m; docs/inspect.md)"},
		{name: "auth-cache-ttl", env: "FAREBOX_AUTH_CACHE_TTL", def: "5s", help: "how long a resolved API key is cached per instance (revocation delay)"},
		{name: "idempotency-ttl", env: "FAREBOX_IDEMPOTENCY_TTL", def: "24h", help: "how long Idempotency-Key responses are kept"},
		{name: "books-checkpoint-interval", env: "FAREBOX_BOOKS_CHECKPOINT_INTERVAL", def: "1h", help: "how often this instance signs a checkpoint of every books chain that grew (0 disables; docs/books.md)"},
		{name: "books-key", env: "FAREBOX_BOOKS_KEY", def: "", help: "the books key (Ed25519): a PKCS#8 PEM file (created when missing), or the pkcs11: URI of a key in a hardware token (docs/operations.md, \"Keys in a hardware token\"); empty: books-ed25519.pem in --data-dir"},
		{name: "workers", env: "FAREBOX_WORKERS", def: "true", help: "run background job workers in this instance"},
		{name: "webhook-workers", env: "FAREBOX_WEBHOOK_WORKERS", def: "8", help: "workers of this instance that deliver webhooks, besides the job workers (with --workers; 0: only the job workers deliver them, one at a time); each posts up to 32 deliveries at once"},
		{name: "webhook-allow-private", env: "FAREBOX_WEBHOOK_ALLOW_PRIVATE", def: "false", help: "let live webhook endpoints use http and loopback, private and link-local addresses (on-premises installations only: it lets a partner make farebox call into your network)"},
		{name: "webhook-timeout", env: "FAREBOX_WEBHOOK_TIMEOUT", def: "10s", help: "how long one webhook delivery attempt may take (connect, send, answer)"},
		{name: "dynamic-window", env: "FAREBOX_DYNAMIC_WINDOW", def: "30s", help: "time window of the moving barcode of dynamic tickets (products with inspection_profile dynamic), 1s..255s"},
		{name: "job-lease", env: "FAREBOX_JOB_LEASE", def: "2m", help: "how long a worker's claim on a job holds; a crashed instance's jobs are taken over after it (longer than the slowest job)"},
		{name: "rate-limit", env: "FAREBOX_RATE_LIMIT", def: "100", help: "requests per second per API key and instance (0 disables)"},
		{name: "rate-burst", env: "FAREBOX_RATE_BURST", def: "200", help: "burst size of the per-key rate limit"},
		{name: "capability-rate-limit", env: "FAREBOX_CAPABILITY_RATE_LIMIT", def: "1", help: "requests without a key per second per coupon, ticket or invoice document and instance (0 disables)"},
		{name: "capability-rate-burst", env: "FAREBOX_CAPABILITY_RATE_BURST", def: "30", help: "burst size of the per-capability rate limit"},
		{name: "client-rate-limit", env: "FAREBOX_CLIENT_RATE_LIMIT", def: "100", help: "requests without a key per second per client address (IPv6: per /64) and instance (0 disables); generous for phones behind one carrier NAT address"},
		{name: "client-rate-burst", env: "FAREBOX_CLIENT_RATE_BURST", def: "1000", help: "burst size of the per-client rate limit"},
		{name: "redis-url", env: "FAREBOX_REDIS_URL", def: "", help: "redis://[:password@]host:port/db (or rediss://) shared by every instance: the rate limits and the sign-in throttle hold across instances and restarts; while Redis is unreachable each instance limits on its own (empty: every instance on its own)", secret: true},
		{name: "redis-prefix", env: "FAREBOX_REDIS_PREFIX", def: "farebox:rl:", help: "prefix of the keys farebox writes in --redis-url (instances that share limits use the same one)"},
		{name: "trusted-proxies", env: "FAREBOX_TRUSTED_PROXIES", def: "", help: "comma-separated addresses or CIDR prefixes of the reverse proxies whose X-Forwarded-For names the client (empty: the socket's peer address is the client)"},
		{name: "metrics-addr", env: "FAREBOX_METRICS_ADDR", def: "", help: "serve /metrics on this address instead of the API listener (empty: /metrics on --addr, without a key, as before; set it when --addr is reachable from outside)"},
		{name: "pprof-addr", env: "FAREBOX_PPROF_ADDR", def: "", help: "serve Go's net/http/pprof on this address (empty: off; keep it on loopback)"},
		{name: "admin-password-file", env: "FAREBOX_ADMIN_PASSWORD_FILE", def: "", help: "file with the operator console's \"user:$argon2id$...\" line (farebox admin-password writes it); empty: /admin refuses every sign-in"},
		{name: "wallet-badges", env: "FAREBOX_WALLET_BADGES", def: "", help: "directory with the official add-to-wallet badges apple-wallet-{en,de}.svg and google-wallet-{en,de}.svg from Apple and Google (docs/web.md \"Wallet badges\"); empty: the traveller page draws its own buttons"},
		{name: "session-key", env: "FAREBOX_SESSION_KEY", def: "", help: "HMAC key for session tokens (default: generated once and stored in the database, so all instances share it)", secret: true},
		{name: "gtfs-refresh", env: "FAREBOX_GTFS_REFRESH", def: "10s", help: "how often each instance checks the stored GTFS feed versions and reloads changed feeds"},
		{name: "realtime", env: "FAREBOX_REALTIME", def: "", help: "GTFS-RT TripUpdates sources per feed, overriding the import's: \"FEED=URL-or-file;FEED2=...\" (FEED= switches one off)"},
		{name: "realtime-alerts", env: "FAREBOX_REALTIME_ALERTS", def: "", help: "GTFS-RT service alerts sources per feed: \"FEED=URL-or-file;FEED2=...\" (without one, alerts in the TripUpdates message are shown)"},
		{name: "realtime-interval", env: "FAREBOX_REALTIME_INTERVAL", def: "30s", help: "poll interval of the sources set with --realtime"},
		{name: "realtime-max-age", env: "FAREBOX_REALTIME_MAX_AGE", def: "5m", help: "realtime predictions older than this (by feed header time) are ignored"},
		{name: "board-cache-mb", env: "FAREBOX_BOARD_CACHE_MB", def: "32", help: "MiB of encoded departure boards each instance caches per station and minute (0: no cache)"},
		{name: "gzip-cache-mb", env: "FAREBOX_GZIP_CACHE_MB", def: "8", help: "MiB of gzip-compressed departure boards each instance keeps for clients that accept gzip; a board is compressed the second time it is sent (0: never compress)"},
		{name: "smtp-url", env: "FAREBOX_SMTP_URL", def: "", secret: true, help: "SMTP submission relay that sends each invoice, credit note and payment notice to a buyer with an e-mail address (electronic_address_scheme_id EM): smtp://user:password@relay:587 (STARTTLS whenever offered and always before credentials; no user: no AUTH); empty: nothing is sent, documents wait to be downloaded"},
		{name: "invoice-from", env: "FAREBOX_INVOICE_FROM", def: "", help: "sender of the invoice e-mails, an address or \"Name <address>\" (default: the seller's name and contact e-mail)"},
		// Retention (docs/privacy.md).
		{name: "retention-identification", env: "FAREBOX_RETENTION_IDENTIFICATION", def: "183d", help: "how long after a ticket's validity ends its identification data (name, birth date) and residence postal code are kept before the daily retention job erases them: days (183d) or a duration (4392h); at least 30d"},
		{name: "retention-billing-records", env: "FAREBOX_RETENTION_BILLING_RECORDS", def: "8y", help: "how many calendar years after the end of a document's year billable items, invoices and their files (and a restricted customer's recipient data) are kept: at least 8y (§ 14b UStG, § 147 AO)"},
		// Wallets and inspection barcodes (docs/wallet.md).
		{name: "inspection-keys", env: "FAREBOX_INSPECTION_KEYS", def: "", help: "inspection barcode keys: a directory, comma-separated files inspection-<kid>.key/.pub, or the pkcs11: URI of a hardware token keeping them as inspection-<kid> (docs/operations.md, \"Keys in a hardware token\") (default: generated into the data dir, or into the database on PostgreSQL)"},
		{name: "apple-pass-cert", env: "FAREBOX_APPLE_PASS_CERT", def: "", help: "PEM file of the Apple Pass Type ID certificate (default: a development certificate; passes will not install on devices)"},
		{name: "apple-pass-key", env: "FAREBOX_APPLE_PASS_KEY", def: "", help: "PEM file of the pass certificate's private key, or the pkcs11: URI of the key in a hardware token (docs/operations.md, \"Keys in a hardware token\")"},
		{name: "apple-wwdr-cert", env: "FAREBOX_APPLE_WWDR_CERT", def: "", help: "PEM file of Apple's WWDR G4 intermediate certificate"},
		{name: "apple-pass-type-id", env: "FAREBOX_APPLE_PASS_TYPE_ID", def: "", help: "pass type identifier (default: the certificate's UID)"},
		{name: "apple-team-id", env: "FAREBOX_APPLE_TEAM_ID", def: "", help: "Apple team identifier (default: the certificate's OU)"},
		{name: "apns-key", env: "FAREBOX_APNS_KEY", def: "", help: "the .p8 APNs authentication key file, or the pkcs11: URI of the key imported into a hardware token; with --public-url, Apple passes are updated by push (default: no pushes)"},
		{name: "apns-key-id", env: "FAREBOX_APNS_KEY_ID", def: "", help: "the 10-character id of the --apns-key"},
		{name: "apns-team-id", env: "FAREBOX_APNS_TEAM_ID", def: "", help: "the team owning the --apns-key (default: the pass team id)"},
		{name: "apns-endpoint", env: "FAREBOX_APNS_ENDPOINT", def: "https://api.push.apple.com", help: "APNs server (https://api.sandbox.push.apple.com for development builds)"},
		{name: "google-service-account", env: "FAREBOX_GOOGLE_SERVICE_ACCOUNT", def: "", help: "service-account JSON key file for Google Wallet save links; its private_key may be the pkcs11: URI of the key imported into a hardware token (default: a development key Google rejects)"},
		{name: "google-issuer-id", env: "FAREBOX_GOOGLE_ISSUER_ID", def: "", help: "numeric Google Wallet issuer id (required with --google-service-account)"},
		{name: "google-issuer-name", env: "FAREBOX_GOOGLE_ISSUER_NAME", def: "", help: "issuer name shown on Google passes (default: --brand-organization)"},
		{name: "google-wallet-origins", env: "FAREBOX_GOOGLE_WALLET_ORIGINS", def: "", help: "comma-separated web origins allowed to show the Google save button"},
		{name: "google-wallet-api", env: "FAREBOX_GOOGLE_WALLET_API", def: "true", help: "with --google-service-account: insert objects through the Google Wallet REST API (short save links) and keep saved passes current"},
		{name: "google-api-url", env: "FAREBOX_GOOGLE_API_URL", def: "https://walletobjects.googleapis.com/walletobjects/v1", help: "Google Wallet REST API base URL (walletobjects v1)"},
		{name: "google-token-url", env: "FAREBOX_GOOGLE_TOKEN_URL", def: "", help: "OAuth2 token URL of the service account (default: the key file's token_uri, else https://oauth2.googleapis.com/token)"},
		{name: "uic-issuer", env: "FAREBOX_UIC_ISSUER", def: "", help: "UIC 918.3 barcode signer as RICS:KEYID:KEYFILE (DSA PEM, or the pkcs11: URI of the key in a hardware token; docs/barcodes.md) (default: a development key in the data dir; its barcodes are specimens)"},
		{name: "vdv-issuer", env: "FAREBOX_VDV_ISSUER", def: "", help: "VDV-KA static barcode signer as ORG:PRODUCTORG:KEYFILE:CERTFILE (1024-bit RSA PEM or the pkcs11: URI of the key in a hardware token, CV certificate; needs --vdv-root and --vdv-ca; docs/barcodes.md) (default: a development PKI in the data dir; its barcodes say test)"},
		{name: "blocklist-import", env: "FAREBOX_BLOCKLIST_IMPORT", def: "", help: "URL of an external blocklist (farebox's format, docs/blocklist.md) imported on a schedule; its entries void the farebox tickets they name"},
		{name: "blocklist-interval", env: "FAREBOX_BLOCKLIST_INTERVAL", def: "30s", help: "how often --blocklist-import is fetched (at least 1s)"},
		{name: "blocklist-source", env: "FAREBOX_BLOCKLIST_SOURCE", def: "import", help: "name of the --blocklist-import source (a-z, 0-9, . _ -; shown in the voided tickets' reason)"},
		{name: "blocklist-keys", env: "FAREBOX_BLOCKLIST_KEYS", def: "", help: "keys.json of the --blocklist-import source: its signature must verify (without it the signature is not checked)"},
		{name: "records-export-dir", env: "FAREBOX_RECORDS_EXPORT_DIR", def: "", help: "directory where serve writes the previous day's (Europe/Berlin) issuance and inspection records, age-encrypted to --records-recipient, once a day as records-YYYY-MM-DD.age (one instance writes each day; docs/records.md); empty: no scheduled export"},
		{name: "records-recipient", env: "FAREBOX_RECORDS_RECIPIENT", def: "", help: "age recipient of the records export: \"age1…\" (or an SSH public key), or @FILE with one a line (required with --records-export-dir; checked at start)"},
		{name: "records-export-catch-up", env: "FAREBOX_RECORDS_EXPORT_CATCH_UP", def: "7", help: "how many days back the scheduled records export writes the days no instance wrote (every instance down over a weekend), oldest first; 1 to 366 (1: the previous day only); older days: records export --day"},
		{name: "pseudonym-key", env: "FAREBOX_PSEUDONYM_KEY", def: "", help: "file holding the key of the travellers' pseudonyms in the records export (hex, base64 or raw, at least 32 bytes); empty: the key the database keeps"},
		{name: "vdv-root", env: "FAREBOX_VDV_ROOT", def: "", help: "the VDV root CV certificate (7F21 with an unsigned 5F4E body)"},
		{name: "vdv-ca", env: "FAREBOX_VDV_CA", def: "", help: "comma-separated VDV CA CV certificates signed by --vdv-root"},
		{name: "allow-development-barcode-keys", env: "FAREBOX_ALLOW_DEVELOPMENT_BARCODE_KEYS", def: "false", help: "start although live tickets of a uic-918-3-uflex or vdv-ka-static product would carry barcodes signed with a development UIC/VDV key (specimens no inspection device accepts); without it serve refuses to start when a live API key exists (trials only; docs/barcodes.md)"},
		{name: "google-logo-url", env: "FAREBOX_GOOGLE_LOGO_URL", def: "", help: "https logo of the Google transit class (without it the class must exist in the console)"},
		{name: "brand-organization", env: "FAREBOX_BRAND_ORGANIZATION", def: "", help: "organisation selling the tickets, shown on passes and in the rendering engine (default: the development brand \"farebox\"; required with any other --brand-* setting)"},
		{name: "brand-operator", env: "FAREBOX_BRAND_OPERATOR", def: "", help: "transport company issuing the tickets, shown on passes and in the rendering engine (default: --brand-organization)"},
		{name: "brand-foreground-color", env: "FAREBOX_BRAND_FOREGROUND_COLOR", def: "", help: "text colour of passes and the engine's header, #rrggbb or rgb(r, g, b) (default #ffffff)"},
		{name: "brand-background-color", env: "FAREBOX_BRAND_BACKGROUND_COLOR", def: "", help: "background colour of passes and the engine's header (default #005c44)"},
		{name: "brand-label-color", env: "FAREBOX_BRAND_LABEL_COLOR", def: "", help: "label colour of passes (default #c4e8d6); text and labels need 3:1 contrast to the background"},
		{name: "brand-icon", env: "FAREBOX_BRAND_ICON", def: "", help: "square PNG icon of passes, at least 87x87 pixels (default: farebox's glyph)"},
		{name: "brand-logo", env: "FAREBOX_BRAND_LOGO", def: "", help: "PNG logo of passes and the engine, at least 150 pixels high and at most 3.2 times as wide (default: farebox's glyph)"},
		{name: "advertise-development-wallets", env: "FAREBOX_ADVERTISE_DEVELOPMENT_WALLETS", def: "false", help: "list wallets in available_rendering_options even with development credentials (never for real phones)"},
	}, sellerSettings()...)
}

// Load parses args (without the subcommand name) with getenv as the
// environment. It returns flag.ErrHelp after printing usage for -h.
func Load(args []string, getenv func(string) string, out io.Writer) (Config, error) {
	var c Config
	fs, vals, err := c.flagSet(getenv, out)
	if err != nil {
		return c, err
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("config: unexpected argument %q", fs.Arg(0))
	}
	v := &values{vals: vals}
	c.readService(v)
	c.readLimits(v)
	c.readWallets(v)
	c.readInvoicingAndTransit(v)
	c.readDelivery(v)
	if err := c.validate(); err != nil {
		v.fail(err)
	}
	return c, errors.Join(v.errs...)
}

// flagSet defines one flag per setting, whose default is the setting's
// environment variable when set (for a secret also the file its _FILE
// twin names), else the setting's default. vals holds each flag's value
// by setting name once the set is parsed.
func (c *Config) flagSet(getenv func(string) string, out io.Writer) (fs *flag.FlagSet, vals map[string]*string, err error) {
	fs = flag.NewFlagSet("farebox serve", flag.ContinueOnError)
	fs.SetOutput(out)
	vals = map[string]*string{}
	for _, s := range c.settings() {
		def := s.def
		if v := getenv(s.env); v != "" {
			def = v
		} else if s.secret {
			if f := getenv(s.env + "_FILE"); f != "" {
				b, err := os.ReadFile(f)
				if err != nil {
					return nil, nil, fmt.Errorf("config: %s_FILE: %w", s.env, err)
				}
				def = strings.TrimSpace(string(b))
			}
		}
		v := def
		vals[s.name] = &v
		shown := s.def
		if s.secret {
			shown = ""
		}
		fs.StringVar(vals[s.name], s.name, def, fmt.Sprintf("%s (env %s, default %q)", s.help, s.env, shown))
	}
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: farebox serve [flags]\n\nEvery flag can also be set by its environment variable.\n\n")
		fs.PrintDefaults()
	}
	return fs, vals, nil
}

// values reads the parsed flags by setting name and collects every value
// that does not parse, so that Load reports all of them at once (in the
// order they are read).
type values struct {
	vals map[string]*string
	errs []error
}

func (v *values) get(n string) string { return *v.vals[n] }

func (v *values) fail(err error) { v.errs = append(v.errs, err) }

func (v *values) dur(n string) time.Duration {
	d, err := time.ParseDuration(v.get(n))
	if err != nil || d < 0 {
		v.fail(fmt.Errorf("--%s: %q is not a duration", n, v.get(n)))
	}
	return d
}

func (v *values) num(n string) int64 {
	i, err := strconv.ParseInt(v.get(n), 10, 64)
	if err != nil || i < 0 {
		v.fail(fmt.Errorf("--%s: %q is not a non-negative integer", n, v.get(n)))
	}
	return i
}

func (v *values) boolean(n string) bool {
	b, err := strconv.ParseBool(v.get(n))
	if err != nil {
		v.fail(fmt.Errorf("--%s: %q is not true or false", n, v.get(n)))
	}
	return b
}

func (v *values) nonNegative(n string) float64 {
	f, err := strconv.ParseFloat(v.get(n), 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		v.fail(fmt.Errorf("--%s: %q is not a non-negative number", n, v.get(n)))
	}
	return f
}

func (v *values) period(n string) time.Duration {
	d, err := retention.ParsePeriod(v.get(n))
	if err != nil {
		v.fail(fmt.Errorf("--%s: %v", n, err))
	}
	return d
}

// readService reads the listener, database, logging, ledger, timeout and
// worker settings.
func (c *Config) readService(v *values) {
	c.Addr = v.get("addr")
	c.DataDir = v.get("data-dir")
	c.DatabaseURL = v.get("database-url")
	c.IDPrefix = v.get("id-prefix")
	c.PublicURL = strings.TrimRight(v.get("public-url"), "/")
	c.FontDir = v.get("font-dir")
	c.PDFQueue = int(v.num("pdf-queue"))
	c.PDFDeadline = v.dur("pdf-deadline")
	c.LogLevel = v.get("log-level")
	c.LogFormat = v.get("log-format")
	c.MaxBodyBytes = v.num("max-body-bytes")
	c.UsageLedger = v.boolean("usage-ledger")
	c.LedgerFlush = v.boolean("usage-ledger-flush")
	c.LedgerJournal = v.get("usage-ledger-journal")
	c.LedgerCommit = v.get("usage-ledger-commit")
	c.LedgerWindow = v.dur("usage-ledger-window")
	c.LedgerWindowRows = int(v.num("usage-ledger-window-rows"))
	c.DBMaxConns = int(v.num("db-max-conns"))
	c.Timezone = v.get("timezone")
	c.ShutdownTimeout = v.dur("shutdown-timeout")
	c.RequestTimeout = v.dur("request-timeout")
	c.AuthCacheTTL = v.dur("auth-cache-ttl")
	c.InspectMaxDataAge = v.dur("inspect-max-data-age")
	c.InspectWindowTolerance = v.dur("inspect-window-tolerance")
	c.IdempotencyTTL = v.dur("idempotency-ttl")
	c.BooksCheckpointInterval = v.dur("books-checkpoint-interval")
	c.BooksKey = v.get("books-key")
	c.Workers = v.boolean("workers")
	c.JobLease = v.dur("job-lease")
	c.DynamicWindow = v.dur("dynamic-window")
	c.WebhookWorkers = int(v.num("webhook-workers"))
	c.WebhookAllowPrivate = v.boolean("webhook-allow-private")
	c.WebhookTimeout = v.dur("webhook-timeout")
	if c.WebhookWorkers < 0 || c.WebhookWorkers > 256 {
		v.fail(fmt.Errorf("--webhook-workers: %d is not from 0 to 256", c.WebhookWorkers))
	}
}

// readLimits reads the rate limits, the trusted proxies and the operator
// listeners and secrets.
func (c *Config) readLimits(v *values) {
	rl, err := strconv.ParseFloat(v.get("rate-limit"), 64)
	if err != nil || rl < 0 {
		v.fail(fmt.Errorf("--rate-limit: %q is not a non-negative number", v.get("rate-limit")))
	}
	c.RateLimit = rl
	c.RateBurst = int(v.num("rate-burst"))
	c.CapabilityRate = v.nonNegative("capability-rate-limit")
	c.CapabilityBurst = int(v.num("capability-rate-burst"))
	c.ClientRate = v.nonNegative("client-rate-limit")
	c.ClientBurst = int(v.num("client-rate-burst"))
	tp, err := ParseTrustedProxies(v.get("trusted-proxies"))
	if err != nil {
		v.fail(fmt.Errorf("--trusted-proxies: %v", err))
	}
	c.TrustedProxies = tp
	c.RedisURL, c.RedisPrefix = v.get("redis-url"), v.get("redis-prefix")
	if c.RedisURL != "" {
		if u, err := url.Parse(c.RedisURL); err != nil || (u.Scheme != "redis" && u.Scheme != "rediss" && u.Scheme != "unix") {
			v.fail(errors.New("--redis-url: not a redis://, rediss:// or unix:// URL"))
		}
	}
	c.SessionKey = v.get("session-key")
	c.AdminPasswordFile = v.get("admin-password-file")
	c.WalletBadges = v.get("wallet-badges")
	c.PprofAddr = v.get("pprof-addr")
	c.MetricsAddr = v.get("metrics-addr")
}

// readWallets reads the inspection and barcode keys, the Apple and Google
// wallet credentials and the brand.
func (c *Config) readWallets(v *values) {
	c.InspectionKeys = v.get("inspection-keys")
	c.UICIssuer = v.get("uic-issuer")
	c.VDVIssuer, c.VDVRoot, c.VDVCAs = v.get("vdv-issuer"), v.get("vdv-root"), v.get("vdv-ca")
	c.AllowDevelopmentBarcodeKeys = v.boolean("allow-development-barcode-keys")
	c.BlocklistImport, c.BlocklistSource, c.BlocklistKeys = v.get("blocklist-import"), v.get("blocklist-source"), v.get("blocklist-keys")
	c.BlocklistInterval = v.dur("blocklist-interval")
	if c.BlocklistImport != "" && !strings.HasPrefix(c.BlocklistImport, "http://") && !strings.HasPrefix(c.BlocklistImport, "https://") {
		v.fail(errors.New("--blocklist-import: an http:// or https:// URL"))
	}
	c.RecordsExportDir, c.RecordsRecipient, c.PseudonymKey = v.get("records-export-dir"), v.get("records-recipient"), v.get("pseudonym-key")
	if n := v.num("records-export-catch-up"); n < 1 || n > 366 {
		v.fail(errors.New("--records-export-catch-up: a number of days from 1 to 366"))
	} else {
		c.RecordsCatchUp = int(n)
	}
	if c.RecordsExportDir != "" && strings.TrimSpace(c.RecordsRecipient) == "" {
		v.fail(errors.New("--records-recipient: required with --records-export-dir (the reporting system's age recipient, age1… or @FILE)"))
	}
	if c.BlocklistInterval < time.Second {
		v.fail(errors.New("--blocklist-interval: at least 1s"))
	}
	if c.VDVIssuer != "" && c.VDVRoot == "" {
		v.fail(errors.New("--vdv-issuer needs --vdv-root and --vdv-ca (the chain its certificate verifies under)"))
	}
	c.ApplePassCert, c.ApplePassKey, c.AppleWWDRCert = v.get("apple-pass-cert"), v.get("apple-pass-key"), v.get("apple-wwdr-cert")
	c.ApplePassTypeID, c.AppleTeamID = v.get("apple-pass-type-id"), v.get("apple-team-id")
	c.GoogleServiceAccount, c.GoogleIssuerID = v.get("google-service-account"), v.get("google-issuer-id")
	c.GoogleIssuerName, c.GoogleLogoURL = v.get("google-issuer-name"), v.get("google-logo-url")
	c.GoogleWalletAPI, c.GoogleAPIURL, c.GoogleTokenURL = v.boolean("google-wallet-api"), v.get("google-api-url"), v.get("google-token-url")
	c.APNsKey, c.APNsKeyID, c.APNsTeamID, c.APNsEndpoint = v.get("apns-key"), v.get("apns-key-id"), v.get("apns-team-id"), v.get("apns-endpoint")
	if c.APNsKey != "" && c.APNsKeyID == "" {
		v.fail(fmt.Errorf("--apns-key-id: required with --apns-key"))
	}
	if !strings.HasPrefix(c.APNsEndpoint, "https://") {
		v.fail(fmt.Errorf("--apns-endpoint: must be an https URL"))
	}
	for _, o := range strings.Split(v.get("google-wallet-origins"), ",") {
		if o = strings.TrimSpace(o); o != "" {
			c.GoogleOrigins = append(c.GoogleOrigins, o)
		}
	}
	c.AdvertiseDevelopmentWallets = v.boolean("advertise-development-wallets")
	c.BrandSettings = wallet.BrandSettings{Organization: v.get("brand-organization"), Operator: v.get("brand-operator"),
		Foreground: v.get("brand-foreground-color"), Background: v.get("brand-background-color"), Label: v.get("brand-label-color"),
		IconFile: v.get("brand-icon"), LogoFile: v.get("brand-logo")}
	brand, err := wallet.LoadBrand(c.BrandSettings)
	if err != nil {
		v.fail(err)
	}
	c.Brand = brand
}

// readInvoicingAndTransit reads the seller and payment terms, the transit
// feeds and caches, and the retention periods.
func (c *Config) readInvoicingAndTransit(v *values) {
	c.Seller = sellerFrom(v.get)
	c.PaymentDays = int(v.num("invoice-payment-days"))
	c.GTFSRefresh = v.dur("gtfs-refresh")
	c.RealtimeInterval = v.dur("realtime-interval")
	c.RealtimeMaxAge = v.dur("realtime-max-age")
	c.BoardCacheMB = v.num("board-cache-mb")
	c.GzipCacheMB = v.num("gzip-cache-mb")
	years, err := retention.ParseYears(v.get("retention-billing-records"))
	if err != nil {
		v.fail(fmt.Errorf("--retention-billing-records: %v", err))
	}
	c.Retention = retention.Policy{Identification: v.period("retention-identification"), BillingYears: years}
	rt, err := ParseRealtime(v.get("realtime"))
	if err != nil {
		v.fail(err)
	}
	c.Realtime = rt
	ra, err := parseSources("--realtime-alerts", v.get("realtime-alerts"))
	if err != nil {
		v.fail(err)
	}
	c.RealtimeAlerts = ra
}

// validateLedgerWindow checks the deferred ledger's settings.
func (c *Config) validateLedgerWindow() (errs []error) {
	if c.LedgerCommit != "deferred" && c.LedgerCommit != "before-response" {
		errs = append(errs, fmt.Errorf("--usage-ledger-commit: %q is not deferred or before-response", c.LedgerCommit))
	}
	if c.LedgerWindow <= 0 || c.LedgerWindow > time.Minute {
		errs = append(errs, fmt.Errorf("--usage-ledger-window: %s must be more than 0 and at most 1m", c.LedgerWindow))
	}
	if c.LedgerWindowRows < 1 || c.LedgerWindowRows > 1_000_000 {
		errs = append(errs, fmt.Errorf("--usage-ledger-window-rows: %d must be 1 to 1000000", c.LedgerWindowRows))
	}
	return errs
}

// readDelivery reads the SMTP relay and the sender of invoice e-mails.
func (c *Config) readDelivery(v *values) {
	if raw := v.get("smtp-url"); raw != "" {
		r, err := smtpmail.ParseURL(raw)
		if err != nil {
			v.fail(fmt.Errorf("--smtp-url: %v", err))
		}
		c.SMTP = r
	}
	from := v.get("invoice-from")
	if from == "" {
		c.InvoiceFrom = mail.Address{Name: c.Seller.Name, Address: c.Seller.ContactEmail}
		return
	}
	a, err := mail.ParseAddress(from)
	if err != nil {
		v.fail(fmt.Errorf("--invoice-from: %q is not an e-mail address or \"Name <address>\" (%v)", from, err))
		return
	}
	c.InvoiceFrom = *a
}

func (c *Config) validate() error {
	var errs []error
	if c.IDPrefix == "" || strings.ContainsAny(c.IDPrefix, "/%+&#? ") {
		errs = append(errs, fmt.Errorf("--id-prefix: %q must be a non-empty URL-safe word", c.IDPrefix))
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") && !strings.HasPrefix(c.DatabaseURL, "sqlite:") {
		errs = append(errs, errors.New("--database-url: must start with postgres:// (or sqlite:)"))
	}
	if _, err := time.LoadLocation(c.Timezone); err != nil {
		errs = append(errs, fmt.Errorf("--timezone: %v", err))
	}
	if c.InspectWindowTolerance > 10*time.Minute {
		errs = append(errs, fmt.Errorf("--inspect-window-tolerance: %v must be at most 10m (a wider tolerance lets a screenshot pass for longer)", c.InspectWindowTolerance))
	}
	if c.DynamicWindow < time.Second || c.DynamicWindow > 255*time.Second || c.DynamicWindow%time.Second != 0 {
		errs = append(errs, fmt.Errorf("--dynamic-window: %v must be whole seconds, 1s..255s", c.DynamicWindow))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("--log-level: %q is not debug, info, warn or error", c.LogLevel))
	}
	switch c.LedgerJournal {
	case "auto", "journal", "database":
	default:
		errs = append(errs, fmt.Errorf("--usage-ledger-journal: %q is not auto, journal or database", c.LedgerJournal))
	}
	errs = append(errs, c.validateLedgerWindow()...)
	if c.LogFormat != "json" && c.LogFormat != "text" {
		errs = append(errs, fmt.Errorf("--log-format: %q is not json or text", c.LogFormat))
	}
	if err := invoicedoc.ValidateSeller(&c.Seller); err != nil {
		if ae := apperr.As(err); ae != nil && len(ae.Details) > 0 {
			for _, d := range ae.Details {
				errs = append(errs, fmt.Errorf("--seller-* (%s): %s %s", strings.TrimPrefix(d.Field, "/seller/"), d.Field, d.Message))
			}
		} else {
			errs = append(errs, fmt.Errorf("--seller-*: %v", err))
		}
	}
	if c.PaymentDays < 1 || c.PaymentDays > 365 {
		errs = append(errs, errors.New("--invoice-payment-days: must be 1 to 365"))
	}
	if c.GTFSRefresh < time.Second {
		errs = append(errs, errors.New("--gtfs-refresh: must be at least 1s"))
	}
	if c.RealtimeInterval < time.Second {
		errs = append(errs, errors.New("--realtime-interval: must be at least 1s"))
	}
	if c.BoardCacheMB > 1<<20 {
		errs = append(errs, errors.New("--board-cache-mb: must be at most 1048576 (1 TiB)"))
	}
	if c.GzipCacheMB > 1<<20 {
		errs = append(errs, errors.New("--gzip-cache-mb: must be at most 1048576 (1 TiB)"))
	}
	if c.Retention.Identification > 0 && c.Retention.BillingYears > 0 {
		if err := c.Retention.Validate(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.MaxBodyBytes == 0 {
		errs = append(errs, errors.New("--max-body-bytes: must be positive"))
	}
	return errors.Join(errs...)
}

// Embedded reports whether the service runs on embedded SQLite.
func (c Config) Embedded() bool {
	return c.DatabaseURL == "" || strings.HasPrefix(c.DatabaseURL, "sqlite:")
}

// BaseURL is the public base URL for links.
func (c Config) BaseURL() string {
	if c.PublicURL != "" {
		return c.PublicURL
	}
	return "http://" + c.Addr
}

// String lists the settings with secrets masked (for the startup log).
func (c Config) String() string {
	m := map[string]string{
		"addr": c.Addr, "data_dir": c.DataDir, "id_prefix": c.IDPrefix, "public_url": c.BaseURL(),
		"usage_ledger": strconv.FormatBool(c.UsageLedger), "workers": strconv.FormatBool(c.Workers),
		"timezone": c.Timezone, "database": "sqlite (embedded)", "metrics_addr": c.MetricsAddr,
	}
	if !c.Embedded() {
		m["database"] = "postgres (" + maskURL(c.DatabaseURL) + ")"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + "=" + m[k])
	}
	return b.String()
}

func maskURL(u string) string {
	at := strings.LastIndex(u, "@")
	scheme := strings.Index(u, "://")
	if at < 0 || scheme < 0 {
		return u
	}
	return u[:scheme+3] + "***" + u[at:]
}

// ParseRealtime parses the --realtime setting: "FEED=SOURCE" entries
// separated by ";" or whitespace, where SOURCE is an http(s) URL or a file
// and an empty SOURCE switches the feed's stored source off.
func ParseRealtime(v string) (map[string]string, error) { return parseSources("--realtime", v) }

// parseSources parses "FEED=SOURCE" entries of the setting named flag.
func parseSources(flag, v string) (map[string]string, error) {
	out := map[string]string{}
	for _, e := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ' ' || r == '\t' || r == '\n' }) {
		id, src, ok := strings.Cut(e, "=")
		if !ok || id == "" || strings.ContainsAny(id, "/:") {
			return nil, fmt.Errorf("%s: %q is not FEED=SOURCE", flag, e)
		}
		if _, dup := out[id]; dup {
			return nil, fmt.Errorf("%s: feed %q given twice", flag, id)
		}
		out[id] = src
	}
	return out, nil
}

// ParseTrustedProxies reads a comma-separated list of addresses and CIDR
// prefixes ("10.0.0.0/8, 192.168.1.7, fd00::/8").
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is not an IP address or CIDR prefix", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
