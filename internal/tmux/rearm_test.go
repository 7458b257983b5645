package tmux

import (
	"testing"
	"time"
)

func TestNextBackoffDoublesWhileAPaneKeepsWritingAndStartsShortOnceQuiet(t *testing.T) {
	armed := time.Unix(1000, 0)
	tests := []struct {
		name string
		last time.Duration
		at   time.Time
		want time.Duration
	}{
		{"first mute", 0, armed.Add(time.Hour), rearmFirst},
		{"written at once after a re-arm", rearmFirst, armed.Add(time.Millisecond), 2 * rearmFirst},
		{"written just within quiet", 2 * rearmFirst, armed.Add(rearmQuiet - time.Millisecond), 4 * rearmFirst},
		{"at the bound", rearmMax, armed.Add(time.Millisecond), rearmMax},
		{"near the bound", rearmMax * 3 / 4, armed, rearmMax},
		{"quiet since the re-arm", rearmMax, armed.Add(rearmQuiet), rearmFirst},
	}
	for _, tt := range tests {
		if got := nextBackoff(tt.last, armed, tt.at); got != tt.want {
			t.Errorf("%s: nextBackoff(%v, armed, armed+%v) = %v, want %v", tt.name, tt.last, tt.at.Sub(armed), got, tt.want)
		}
	}
}

func TestPausedAtTellsWhetherAPaneWasPausedAtAMoment(t *testing.T) {
	t0 := time.Unix(1000, 0)
	before, after := t0.Add(-time.Second), t0.Add(time.Millisecond)
	tests := []struct {
		name string
		f    paneFlow
		want bool
	}{
		{"never muted", paneFlow{}, false},
		{"muted before, not re-armed", paneFlow{muted: true, mutedAt: before, continues: 1, continued: 1}, true},
		{"armed before, muted after by later output", paneFlow{muted: true, mutedAt: after, armedAt: before, continues: 1, continued: 1}, false},
		{"re-armed after", paneFlow{armedAt: after, mutedAt: before, continues: 2, continued: 2}, true},
		{"re-armed before, quiet since", paneFlow{armedAt: before, mutedAt: before.Add(-time.Second), continues: 2, continued: 2}, false},
		{"re-arm sent, not yet in force", paneFlow{mutedAt: before, continues: 2, continued: 1}, true},
	}
	for _, tt := range tests {
		if got := tt.f.pausedAt(t0); got != tt.want {
			t.Errorf("%s: pausedAt = %v, want %v", tt.name, got, tt.want)
		}
	}
}
