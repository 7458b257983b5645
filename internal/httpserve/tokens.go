package httpserve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/tmcp/tmcp/internal/mcpserver"
)

// minTokenLen is the shortest token accepted: anything shorter is a
// password, not a bearer secret.
const minTokenLen = 16

// fingerprintLen is how many hex digits of a token's SHA-256 name it in
// audit lines and messages: enough to tell tokens apart, too few to guess.
const fingerprintLen = 8

// Token is one bearer token and the highest safety tier a session opened
// with it is offered.
type Token struct {
	Secret string
	Tier   mcpserver.Tier
}

// Fingerprint names the token without revealing it: the first hex digits
// of its SHA-256.
func (t Token) Fingerprint() string {
	sum := sha256.Sum256([]byte(t.Secret))
	return hex.EncodeToString(sum[:])[:fingerprintLen]
}

// ReadTokenFile reads a token file: one token a line, optionally followed
// by its tier (readonly, mutating or destructive; def when omitted); blank
// lines and lines starting with # are skipped. The file must be a regular
// file that only its owner can read or write (mode 0600 or stricter).
func ReadTokenFile(path string, def mcpserver.Tier) ([]Token, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("reading the token file: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("token file %s is not a regular file", path)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("token file %s has mode %04o: others could read the tokens; make it readable by its owner only (chmod 600 %s)", path, perm, path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the token file: %w", err)
	}
	tokens, err := parseTokens(b, def)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("token file %s holds no token", path)
	}
	return tokens, nil
}

// parseTokens reads the lines of a token file. Messages name lines, never
// the tokens on them.
func parseTokens(b []byte, def mcpserver.Tier) ([]Token, error) {
	var tokens []Token
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		t := Token{Secret: f[0], Tier: def}
		switch len(f) {
		case 1:
		case 2:
			tier, ok := mcpserver.ParseTier(f[1])
			if !ok {
				return nil, fmt.Errorf("line %d: tier %q is not readonly, mutating or destructive", n, f[1])
			}
			t.Tier = tier
		default:
			return nil, fmt.Errorf("line %d: want TOKEN [readonly|mutating|destructive], got %d words", n, len(f))
		}
		if err := checkSecret(t.Secret); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		tokens = append(tokens, t)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return tokens, nil
}

func checkSecret(s string) error {
	if len(s) < minTokenLen {
		return fmt.Errorf("a token of %d characters is too short: use at least %d", len(s), minTokenLen)
	}
	return nil
}

// EnvToken reads a token from an environment variable's value, at tier
// def; empty means none.
func EnvToken(value string, def mcpserver.Tier) ([]Token, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil, nil
	}
	if err := checkSecret(value); err != nil {
		return nil, fmt.Errorf("TMCP_TOKEN: %w", err)
	}
	return []Token{{Secret: value, Tier: def}}, nil
}

// GeneratedTokenPath is where tmcp keeps the token it makes for the
// server listening on port when none is configured: under
// $XDG_RUNTIME_DIR/tmcp, else the user's configuration directory.
func GeneratedTokenPath(port string) (string, error) {
	dir := os.Getenv("XDG_RUNTIME_DIR")
	if dir == "" {
		d, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("finding a directory for the token: %w", err)
		}
		dir = d
	}
	return filepath.Join(dir, "tmcp", "http-"+port+".token"), nil
}

// GenerateToken returns the token kept at path, making one (at tier def)
// when the file does not exist. The file is written readable by its owner
// only; one that others can read is refused, not reused.
func GenerateToken(path string, def mcpserver.Tier) (Token, error) {
	tokens, err := ReadTokenFile(path, def)
	switch {
	case err == nil:
		return tokens[0], nil
	case !errors.Is(err, os.ErrNotExist):
		return Token{}, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return Token{}, fmt.Errorf("making a directory for the token: %w", err)
	}
	t := Token{Secret: rand.Text() + rand.Text(), Tier: def}
	f, err := os.CreateTemp(filepath.Dir(path), ".token-*")
	if err != nil {
		return Token{}, fmt.Errorf("writing the token: %w", err)
	}
	defer os.Remove(f.Name())
	// CreateTemp makes the file 0600.
	_, err = fmt.Fprintf(f, "%s\n", t.Secret)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		return Token{}, fmt.Errorf("writing the token to %s: %w", path, err)
	}
	return t, nil
}

// keyring checks presented tokens against the configured ones.
type keyring struct {
	sums  [][sha256.Size]byte
	token []Token
}

// newKeyring refuses an empty set, and two tokens that the audit log could
// not tell apart.
func newKeyring(tokens []Token) (*keyring, error) {
	if len(tokens) == 0 {
		return nil, errors.New("no token configured")
	}
	k := &keyring{}
	seen := map[string]int{}
	for i, t := range tokens {
		if j, dup := seen[t.Fingerprint()]; dup {
			return nil, fmt.Errorf("tokens %d and %d have the same fingerprint %s: each token must be different", j+1, i+1, t.Fingerprint())
		}
		seen[t.Fingerprint()] = i
		k.sums = append(k.sums, sha256.Sum256([]byte(t.Secret)))
		k.token = append(k.token, t)
	}
	return k, nil
}

// verify is an auth.TokenVerifier. It compares the presented token with
// every configured one in constant time, so neither the time taken nor
// which comparison ended says anything about a token.
func (k *keyring) verify(_ context.Context, presented string, _ *http.Request) (*auth.TokenInfo, error) {
	sum := sha256.Sum256([]byte(presented))
	found := -1
	for i := range k.sums {
		if subtle.ConstantTimeCompare(sum[:], k.sums[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return nil, fmt.Errorf("%w: not a token this server accepts", auth.ErrInvalidToken)
	}
	t := k.token[found]
	return &auth.TokenInfo{UserID: t.Fingerprint(), Extra: map[string]any{tierKey: t.Tier}}, nil
}

// tierKey is where a verified token's tier is kept in its TokenInfo.
const tierKey = "tmcp.tier"

// tierOf returns the tier of the token a request was verified with.
func tierOf(r *http.Request) (mcpserver.Tier, bool) {
	info := auth.TokenInfoFromContext(r.Context())
	if info == nil {
		return 0, false
	}
	t, ok := info.Extra[tierKey].(mcpserver.Tier)
	return t, ok
}
