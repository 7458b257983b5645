package mcpserver

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

// The fence marks pane text in a reply's text content as data: it sits
// between an opening line "<pane-text TOKEN>" and a closing line
// "</pane-text TOKEN>". The token is drawn afresh from crypto/rand for
// each fence, so a program cannot print a line that closes the fence
// early: it would have to guess 80 random bits. structuredContent carries
// the same text unfenced.
const (
	fenceTag        = "pane-text"
	fenceTokenBytes = 10 // 80 bits, 16 base32 characters
)

// fenceEncoding spells a token with A-Z and 2-7 only: nothing a line
// editor, JSON or a model reads as markup.
var fenceEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// fence returns text between boundary lines holding a fresh token that
// text does not contain. An empty text stays empty: there is nothing to
// mark.
func fence(text string) string {
	if text == "" {
		return ""
	}
	var token string
	for token == "" || strings.Contains(text, token) {
		token = fenceToken()
	}
	return "<" + fenceTag + " " + token + ">\n" + text + "\n</" + fenceTag + " " + token + ">"
}

// fenceToken draws a token from crypto/rand.
func fenceToken() string {
	b := make([]byte, fenceTokenBytes)
	rand.Read(b) // never fails (crypto/rand's contract since Go 1.24)
	return fenceEncoding.EncodeToString(b)
}

// Unfence returns the pane text inside a text block that tmcp fenced,
// and whether the block is one, for code that reads tmcp's replies as a
// program (a batch, the bench, the soak) rather than as a model.
func Unfence(s string) (string, bool) {
	open, rest, ok := strings.Cut(s, "\n")
	token, isOpen := strings.CutPrefix(open, "<"+fenceTag+" ")
	token, isOpen2 := strings.CutSuffix(token, ">")
	closing := "\n</" + fenceTag + " " + token + ">"
	if !ok || !isOpen || !isOpen2 || len(token) == 0 || !strings.HasSuffix(rest, closing) {
		return "", false
	}
	return strings.TrimSuffix(rest, closing), true
}
