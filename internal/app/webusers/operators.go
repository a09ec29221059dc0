package webusers

// The operator of the console: the credentials of --admin-password-file
// (argon2id) and the sign-in that opens an operator session (docs/web.md).

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"github.com/farebox/farebox/internal/idempotency"
	"strings"

	"golang.org/x/crypto/argon2"

	"github.com/farebox/farebox/internal/account"
	"github.com/farebox/farebox/internal/apperr"
)

// OperatorCredentials are the operator's user name and argon2id password
// hash, read from --admin-password-file.
type OperatorCredentials struct {
	User string
	hash argon2Hash
	// fingerprint names the credential in the sessions it opens: a changed
	// password (or user) in the file makes the older sessions invalid.
	fingerprint string
}

// Fingerprint identifies the credential (user and password hash) without
// revealing it; a console session opened with another credential is not
// accepted (OperatorSession).
func (c *OperatorCredentials) Fingerprint() string {
	if c == nil {
		return ""
	}
	return c.fingerprint
}

type argon2Hash struct {
	memory  uint32
	time    uint32
	threads uint8
	salt    []byte
	key     []byte
}

// ParseOperatorCredentials reads "user:$argon2id$v=19$m=…,t=…,p=…$salt$key"
// (the PHC string farebox admin-hash writes; salt and key unpadded
// base64). A line without "user:" names the user "admin".
func ParseOperatorCredentials(text string) (*OperatorCredentials, error) {
	line := strings.TrimSpace(text)
	user, phc := "admin", line
	if i := strings.Index(line, ":$argon2id$"); i > 0 {
		user, phc = line[:i], line[i+1:]
	}
	h, err := parsePHC(phc)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte("farebox operator credential\x00" + user + "\x00" + phc))
	return &OperatorCredentials{User: user, hash: h, fingerprint: hex.EncodeToString(sum[:16])}, nil
}

// parsePHC reads an argon2id PHC string "$argon2id$v=19$m=…,t=…,p=…$salt$key".
func parsePHC(phc string) (argon2Hash, error) {
	var h argon2Hash
	parts := strings.Split(phc, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != "v=19" {
		return h, fmt.Errorf("not an argon2id hash ($argon2id$v=19$m=…,t=…,p=…$salt$key)")
	}
	var p uint32
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &h.memory, &h.time, &p); err != nil || p == 0 || p > 255 || h.time == 0 || h.memory < 8*p {
		return h, fmt.Errorf("argon2id parameters %q: want m=<KiB>,t=<passes>,p=<lanes>", parts[3])
	}
	h.threads = uint8(p)
	var err error
	if h.salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(h.salt) < 8 {
		return h, fmt.Errorf("argon2id salt: unpadded base64 of at least 8 bytes")
	}
	if h.key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(h.key) < 16 {
		return h, fmt.Errorf("argon2id key: unpadded base64 of at least 16 bytes")
	}
	return h, nil
}

// hashPassword is the argon2id PHC string of password with OWASP's
// parameters (HashOperatorPassword): the operator's and the dashboard
// users' passwords are hashed alike.
func hashPassword(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	const m, t, p = 19 * 1024, 2, 1
	key := argon2.IDKey([]byte(password), salt, t, m, p, 32)
	return fmt.Sprintf("$argon2id$v=19$m=%d,t=%d,p=%d$%s$%s", m, t, p,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// matches checks password against h in constant time.
func (h argon2Hash) matches(password string) bool {
	key := argon2.IDKey([]byte(password), h.salt, h.time, h.memory, h.threads, uint32(len(h.key)))
	return subtle.ConstantTimeCompare(key, h.key) == 1
}

// HashOperatorPassword is the line of an --admin-password-file for user
// and password: argon2id with OWASP's parameters (19 MiB, 2 passes, 1
// lane): RFC 9106's 64 MiB took 1.25 s per check on a loaded two-core
// machine, a cost every sign-in attempt would put on the server.
func HashOperatorPassword(user, password string) (string, error) {
	if user == "" || strings.ContainsAny(user, ":\n") {
		return "", fmt.Errorf("the user name must be non-empty, without ':' or a line break")
	}
	phc, err := hashPassword(password)
	if err != nil {
		return "", err
	}
	return user + ":" + phc, nil
}

// verify checks user and password in constant time (the hash runs even for
// a wrong user name, so timing does not tell which was wrong).
func (c *OperatorCredentials) verify(user, password string) bool {
	okKey := c.hash.matches(password)
	okUser := subtle.ConstantTimeCompare([]byte(user), []byte(c.User)) == 1
	return okKey && okUser
}

// OperatorSignIn checks the operator's user name and password and opens a
// session; it returns the session id for the cookie. Wrong credentials are
// Unauthenticated; no credentials configured is Unavailable.
func (s *Service) OperatorSignIn(ctx context.Context, claim idempotency.Claim, c *OperatorCredentials, user, password string) (string, error) {
	const op = "app.OperatorSignIn"
	if c == nil {
		return "", apperr.E(op, apperr.Unavailable, CodeConsoleNotConfigured, "the operator console is not configured (--admin-password-file)")
	}
	if len(user) > 200 || len(password) > 1024 || !c.verify(user, password) {
		return "", apperr.E(op, apperr.Unauthenticated, CodeSignInFailed, "user name or password is wrong")
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", apperr.Wrap(op, err)
	}
	id := base64.RawURLEncoding.EncodeToString(raw)
	now := s.Clock.Now()
	ws := account.WebSession{IDHash: WebSessionHash(id), Kind: account.WebOperator, Subject: c.User, CreatedAt: now, ExpiresAt: now.Add(WebSessionTTL),
		Credential: c.Fingerprint()}
	return id, s.DB.WriteClaimed(ctx, claim, func(q Queries) error { return q.InsertWebSession(ctx, ws) })
}

// OperatorSession returns the operator's live console session with id:
// NotFound unless it is a console session opened with the credential c
// now configured (a password changed in --admin-password-file ends every
// session opened with the old one, on every instance that reads the new
// file).
func (s *Service) OperatorSession(ctx context.Context, c *OperatorCredentials, id string) (WebSession, error) {
	ws, err := s.session(ctx, id)
	if err != nil {
		return WebSession{}, err
	}
	if c == nil || ws.Kind != account.WebOperator || ws.Subject != c.User ||
		subtle.ConstantTimeCompare([]byte(ws.Credential), []byte(c.Fingerprint())) != 1 {
		return WebSession{}, apperr.NotFoundf("app.OperatorSession", CodeNotFound)
	}
	return sessionView(ws), nil
}
