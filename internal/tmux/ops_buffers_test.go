package tmux

import "testing"

func TestIsPrivateBufferKnowsPastesOwnBuffers(t *testing.T) {
	cases := map[string]bool{
		privateBufferPrefix + randomHex(privateBufferRandom): true,
		"tmcp-0123456789ab":  true,
		"tmcp-notes":         false,
		"tmcp-0123456789abc": false,
		"tmcp-0123456789AB":  false,
		"buffer0":            false,
	}
	for name, want := range cases {
		if got := isPrivateBuffer(name); got != want {
			t.Errorf("isPrivateBuffer(%q) = %v, want %v", name, got, want)
		}
	}
}
