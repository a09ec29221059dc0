package metering

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"slices"
	"sync"
	"time"
)

// Header is the request and response header carrying the token.
const Header = "session-token"

// Window is how long a block keeps requests for its resource uncounted.
const Window = 5 * time.Minute

// MaxBlocks is how many of the most recent blocks a token keeps.
const MaxBlocks = 20

const (
	version   = 1
	blockSize = 12 // 8 bytes resource hash + 4 bytes opened-at
	tagSize   = 16
	maxSkew   = 60 // seconds a block may lie in the future
	// MaxTokenLen bounds accepted tokens; longer values are ignored unparsed.
	MaxTokenLen = 4*(2+MaxBlocks*blockSize+tagSize)/3 + 4
)

// StationResource is the resource key of a departure board.
func StationResource(stationID string) string { return "station:" + stationID }

// TripResource is the resource key of a trip (trip updates).
func TripResource(tripID string) string { return "trip:" + tripID }

type block struct {
	res    [8]byte
	opened uint32
}

func resourceHash(resource string) (h [8]byte) {
	var buf [128]byte // resource ids fit; longer ones are hashed all the same
	sum := sha256.Sum256(append(buf[:0], resource...))
	copy(h[:], sum[:8])
	return h
}

// Signer signs and checks the tokens of one key. It keeps keyed HMAC
// states and scratch space for reuse (hmac.New per token costs two extra
// SHA-256 blocks and several allocations on the hottest endpoint); safe for
// concurrent use.
type Signer struct {
	scratch sync.Pool // *signScratch
}

type signScratch struct {
	mac hash.Hash // keyed
	msg []byte
	sum [sha256.Size]byte
}

// NewSigner returns a Signer for key.
func NewSigner(key []byte) *Signer {
	key = slices.Clone(key)
	s := &Signer{}
	s.scratch.New = func() any {
		return &signScratch{mac: hmac.New(sha256.New, key), msg: make([]byte, 0, 512)}
	}
	return s
}

// tag is the token's MAC over the account and body.
func (s *Signer) tag(accountID string, body []byte) (out [tagSize]byte) {
	sc := s.scratch.Get().(*signScratch)
	m := append(sc.msg[:0], "farebox-session-token\x00"...)
	m = binary.BigEndian.AppendUint64(m, uint64(len(accountID)))
	m = append(m, accountID...)
	m = append(m, body...)
	sc.mac.Reset()
	sc.mac.Write(m)
	copy(out[:], sc.mac.Sum(sc.sum[:0]))
	sc.msg = m
	s.scratch.Put(sc)
	return out
}

// decode appends the blocks of a valid token for accountID to dst; ok
// says whether the token was valid.
func (s *Signer) decode(dst []block, accountID, token string) (blocks []block, ok bool) {
	if token == "" || len(token) > MaxTokenLen {
		return dst, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	// The decoder skips CR and LF; only the canonical spelling is a token.
	if err != nil || len(raw) < 2+tagSize || raw[0] != version || base64.RawURLEncoding.EncodeToString(raw) != token {
		return dst, false
	}
	n := int(raw[1])
	if n > MaxBlocks || len(raw) != 2+n*blockSize+tagSize {
		return dst, false
	}
	body, sum := raw[:len(raw)-tagSize], raw[len(raw)-tagSize:]
	if want := s.tag(accountID, body); !hmac.Equal(sum, want[:]) {
		return dst, false
	}
	for i := range n {
		p := body[2+i*blockSize:]
		var b block
		copy(b.res[:], p[:8])
		b.opened = binary.BigEndian.Uint32(p[8:12])
		dst = append(dst, b)
	}
	return dst, true
}

func (s *Signer) encode(accountID string, blocks []block) string {
	var buf [2 + MaxBlocks*blockSize + tagSize]byte
	body := append(buf[:0], version, byte(len(blocks)))
	for _, b := range blocks {
		body = append(body, b.res[:]...)
		body = binary.BigEndian.AppendUint32(body, b.opened)
	}
	t := s.tag(accountID, body)
	body = append(body, t[:]...)
	var out [MaxTokenLen]byte
	return string(base64.RawURLEncoding.AppendEncode(out[:0], body))
}

// Check decides whether a request by accountID for resource, presenting
// token (may be empty), is counted, and returns the token to send back.
// An unexpired block for the resource makes the request uncounted (the
// block keeps its opening time); otherwise the request is counted and opens
// a new block. Expired blocks are dropped, other resources' blocks kept,
// and only the MaxBlocks most recent remain. Invalid tokens count as none.
func (s *Signer) Check(accountID, token, resource string, now time.Time) (counted bool, newToken string) {
	secs := now.Unix()
	var blocks [MaxBlocks + 1]block
	decoded, _ := s.decode(blocks[:0], accountID, token)
	live := unexpired(decoded, secs)
	h := resourceHash(resource)
	counted = true
	for _, b := range live {
		if b.res == h {
			counted = false
			break
		}
	}
	if counted {
		live = append(live, block{res: h, opened: uint32(max(secs, 0))})
	}
	slices.SortStableFunc(live, func(a, b block) int { return int(int64(b.opened) - int64(a.opened)) })
	if len(live) > MaxBlocks {
		live = live[:MaxBlocks]
	}
	return counted, s.encode(accountID, live)
}

// unexpired keeps the blocks still open at secs (in place).
func unexpired(blocks []block, secs int64) []block {
	live := blocks[:0]
	for _, b := range blocks {
		op := int64(b.opened)
		if op <= secs+maxSkew && secs < op+int64(Window/time.Second) {
			live = append(live, b)
		}
	}
	return live
}

// Renew returns the token to send back on a response that is metered per
// request (station search, attributions): the presented token's unexpired
// blocks re-signed, or a valid token without blocks when it holds none or
// is invalid. Clients that drop their token when a response lacks the
// header (the Kotlin transit client) so keep their blocks.
func (s *Signer) Renew(accountID, token string, now time.Time) string {
	var blocks [MaxBlocks]block
	decoded, _ := s.decode(blocks[:0], accountID, token)
	return s.encode(accountID, unexpired(decoded, now.Unix()))
}
