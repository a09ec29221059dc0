// Package account holds partners (accounts) and their API keys. A key is
// shown once at creation and stored only as a SHA-256 hash; its visible
// prefix (fbx_live_XXXXXXXX or fbx_test_XXXXXXXX) identifies it in listings
// and revocation. The key's environment (live or test) decides the
// environment of everything created with it.
package account

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/farebox/farebox/internal/caller"
)

// Environment separates test from live data (caller.Environment).
type Environment = caller.Environment

const (
	Live = caller.Live
	Test = caller.Test
)

// Account is a partner holding API keys.
type Account struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// Key describes an API key without its secret.
type Key struct {
	ID          string
	AccountID   string
	Prefix      string // visible part, e.g. fbx_live_AB12CD34
	Environment Environment
	CreatedAt   time.Time
	RevokedAt   *time.Time
	LastUsedAt  *time.Time // to the minute; nil: never used
}

// Principal is the authenticated caller of a request (caller.Principal).
type Principal = caller.Principal

const (
	livePrefix = "fbx_live_"
	testPrefix = "fbx_test_"
	// secretLen is the number of base32 characters after the environment prefix (160 bits).
	secretLen = 32
	// visibleLen is how many secret characters the listing shows.
	visibleLen = 8
)

const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789abcdefghijkmnopqrstuvwxyz"

// NewKey returns a fresh secret key for env, its visible prefix and its hash.
func NewKey(env Environment) (secret, prefix, hash string) {
	p := livePrefix
	if env == Test {
		p = testPrefix
	}
	buf := make([]byte, secretLen)
	if _, err := rand.Read(buf); err != nil {
		panic("account: crypto/rand failed: " + err.Error())
	}
	var b strings.Builder
	b.WriteString(p)
	for _, c := range buf {
		// 256 % 57 bias is below 0.5 bits over 160 bits of key; acceptable for an opaque token.
		b.WriteByte(alphabet[int(c)%len(alphabet)])
	}
	secret = b.String()
	return secret, secret[:len(p)+visibleLen], Hash(secret)
}

// ParseKey checks the shape of a presented key and returns its environment.
// It never touches the database, so malformed keys are rejected cheaply.
func ParseKey(s string) (Environment, bool) {
	var env Environment
	switch {
	case strings.HasPrefix(s, livePrefix):
		env = Live
	case strings.HasPrefix(s, testPrefix):
		env = Test
	default:
		return "", false
	}
	rest := s[len(livePrefix):]
	if len(rest) != secretLen {
		return "", false
	}
	for i := 0; i < len(rest); i++ {
		if strings.IndexByte(alphabet, rest[i]) < 0 {
			return "", false
		}
	}
	return env, true
}

// Hash is the stored form of a key: its Digest in hex.
func Hash(secret string) string { return Digest(secret).String() }

// KeyDigest is the SHA-256 of a key (a map key that needs no hex encoding).
type KeyDigest [sha256.Size]byte

// Digest returns the SHA-256 of a key.
func Digest(secret string) KeyDigest { return sha256.Sum256([]byte(secret)) }

// String is the stored form (Hash).
func (d KeyDigest) String() string { return hex.EncodeToString(d[:]) }

// MinKeyPrefixChars is how many characters after fbx_live_ or fbx_test_ a
// prefix given for revocation needs: the whole visible part (issue 28:
// "fbx_live_u" revoked keys of two accounts).
const MinKeyPrefixChars = 8

// IsKeyPrefix reports whether s looks like a visible key prefix (for
// revocation): the environment part and at least MinKeyPrefixChars more.
func IsKeyPrefix(s string) bool {
	return (strings.HasPrefix(s, livePrefix) || strings.HasPrefix(s, testPrefix)) && len(s) >= len(livePrefix)+MinKeyPrefixChars
}

// Owner is the account and environment a record belongs to (caller.Owner).
type Owner = caller.Owner

// WebSession is a signed-in person on the web pages (docs/web.md): the
// operator, or (next) a dashboard user of AccountID. Its id is known only
// to the browser's cookie; the store keeps IDHash, its SHA-256.
type WebSession struct {
	IDHash    string
	Kind      string // WebOperator or WebDashboard
	Subject   string // the operator's user name, the dashboard user's e-mail
	AccountID string // "" for the operator
	CreatedAt time.Time
	ExpiresAt time.Time
	// Flash is the sealed one-time notice waiting for the session's next
	// page ("" for none); Credential the fingerprint of the credential the
	// session was opened with ("" for none recorded).
	Flash, Credential string
}

// DashboardUser is a person who signs in to an account's dashboard.
type DashboardUser struct {
	Email     string
	AccountID string
	CreatedAt time.Time
}

// The kinds of web sessions: the operator's, a dashboard user's, an
// inspector's in the inspector app (docs/inspect.md; its subject is the
// inspector's id).
const (
	WebOperator  = "operator"
	WebDashboard = "dashboard"
	WebInspector = "inspector"
)

// DashboardInvite is an open invitation of a partner dashboard user: its
// token's SHA-256, the account and the invited e-mail address.
type DashboardInvite struct {
	TokenHash, AccountID, Email string
	CreatedAt, ExpiresAt        time.Time
}
