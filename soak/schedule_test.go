package main

import (
	"context"
	"reflect"
	"testing"
	"time"
)

func TestPlanSpacesTheDisruptionsEvenlyOverTheMiddleHalf(t *testing.T) {
	const d = 100 * time.Second
	tests := []struct {
		name       string
		tmux, tmcp int
		stop       bool
		want       []disruption
	}{
		{"nothing", 0, 0, false, []disruption{}},
		{"the stop alone is midway", 0, 0, true, []disruption{{50 * time.Second, tmuxStop}}},
		{"one of each", 1, 1, false, []disruption{{25*time.Second + 50*time.Second/3, tmuxRestart}, {25*time.Second + 100*time.Second/3, tmcpRestart}}},
		{"the endurance run's", 2, 1, true, []disruption{
			{35 * time.Second, tmuxRestart}, {45 * time.Second, tmuxStop}, {55 * time.Second, tmcpRestart}, {65 * time.Second, tmuxRestart}}},
		{"tmcp restarts between tmux restarts", 3, 2, false, []disruption{
			{25*time.Second + 50*time.Second/6, tmuxRestart}, {25*time.Second + 100*time.Second/6, tmcpRestart},
			{25*time.Second + 150*time.Second/6, tmuxRestart}, {25*time.Second + 200*time.Second/6, tmcpRestart},
			{25*time.Second + 250*time.Second/6, tmuxRestart}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := plan(d, tt.tmux, tt.tmcp, tt.stop)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("plan(%v, %d, %d, %v) = %v, want %v", d, tt.tmux, tt.tmcp, tt.stop, got, tt.want)
			}
			for _, ev := range got {
				if ev.at <= d/4 || ev.at >= 3*d/4 {
					t.Errorf("%s at %v: outside the middle half of %v", ev.kind, ev.at, d)
				}
			}
		})
	}
}

func TestGateHoldsNewStepsAndTellsWhenTheStepsInsideAreDone(t *testing.T) {
	ctx := context.Background()
	var g gate
	never := make(chan struct{})
	if !g.enter(ctx, never) || !g.enter(ctx, never) {
		t.Fatal("an open gate did not let two steps in")
	}
	drained := g.shut()
	entered := make(chan bool, 1)
	go func() { entered <- g.enter(ctx, never) }()

	g.leave()
	select {
	case <-drained:
		t.Fatal("drained with a step still inside")
	case <-entered:
		t.Fatal("a step went in through a shut gate")
	case <-time.After(50 * time.Millisecond):
	}
	g.leave()
	select {
	case <-drained:
	case <-time.After(5 * time.Second):
		t.Fatal("not drained once the last step left")
	}
	g.open()
	select {
	case ok := <-entered:
		if !ok {
			t.Error("the step held at the gate reported false once it opened")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the step held at the gate did not go in once it opened")
	}
	g.leave()

	// Shut with nobody inside: drained at once. A step held at the gate
	// gives up when its soak ends.
	select {
	case <-g.shut():
	default:
		t.Error("a gate shut with nobody inside is not drained at once")
	}
	done := make(chan struct{})
	close(done)
	if g.enter(ctx, done) {
		t.Error("a step went in through a shut gate after its soak ended")
	}
	g.open()
}

func TestRestartsTellWhichCallsTheyDisturbed(t *testing.T) {
	rs := &restarts{grace: 2 * time.Second}
	t0 := time.Now()
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	rs.list = []*restart{
		{kind: tmuxRestart, from: at(10), to: at(13), inFlight: map[string]int{}},
		{kind: tmcpRestart, from: at(30), to: at(31), inFlight: map[string]int{}},
	}
	tests := []struct {
		name       string
		start, end float64
		during     string
		cut        bool
	}{
		{"before both", 1, 9, "", false},
		{"in flight at the kill", 9, 10.5, tmuxRestart, false},
		{"in the grace after tmux came back", 14, 14.5, tmuxRestart, false},
		{"after the grace", 15.5, 16, "", false},
		{"sent to the tmcp being closed", 29, 30.2, tmcpRestart, true},
		{"sent before the new tmcp took calls", 30.5, 30.6, tmcpRestart, true},
		{"sent to the new tmcp", 31.5, 32, tmcpRestart, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rs.during(at(tt.start), at(tt.end)); got != tt.during {
				t.Errorf("during(%v, %v) = %q, want %q", tt.start, tt.end, got, tt.during)
			}
			if got := rs.cut(at(tt.start), at(tt.end)); got != tt.cut {
				t.Errorf("cut(%v, %v) = %v, want %v", tt.start, tt.end, got, tt.cut)
			}
		})
	}
	rs.observe(reply{Tool: "wait_for_text", Start: at(9), End: at(10.5), Fields: map[string]any{"outcome": "pane_died"}})
	rs.observe(reply{Tool: "list_panes", Start: at(11), End: at(11.1)})
	if got, want := rs.list[0].inFlight, map[string]int{"wait_for_text: pane_died": 1}; !reflect.DeepEqual(got, want) {
		t.Errorf("calls in flight at the kill: %v, want %v", got, want)
	}
	if got := rs.list[0].slowest; got != 500*time.Millisecond {
		t.Errorf("slowest to end after the kill: %v, want 0.5s", got)
	}
}

func TestGoneAnswerTellsAnAnswerSayingThePaneWent(t *testing.T) {
	tests := []struct {
		name string
		r    reply
		want bool
	}{
		{"run_command whose pane died", reply{Tool: "run_command", Fields: map[string]any{"paneDied": true}}, true},
		{"run_command that finished", reply{Tool: "run_command", Fields: map[string]any{"finished": true}}, false},
		{"get_job whose pane died", reply{Tool: "get_job", Fields: map[string]any{"paneDied": true}}, true},
		{"wait_for_text: pane_died", reply{Tool: "wait_for_text", Fields: map[string]any{"outcome": "pane_died"}}, true},
		{"wait_for_text: timeout", reply{Tool: "wait_for_text", Fields: map[string]any{"outcome": "timeout"}}, false},
		{"capture_since reset", reply{Tool: "capture_since", Fields: map[string]any{"reset": true}}, true},
		{"an error", reply{Tool: "run_command", Err: "boom", Fields: map[string]any{"paneDied": true}}, false},
		{"another tool", reply{Tool: "list_panes", Fields: map[string]any{"paneDied": true}}, false},
	}
	for _, tt := range tests {
		if got := goneAnswer(tt.r); got != tt.want {
			t.Errorf("%s: goneAnswer = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestTheCallsGoOnAQuarterPastTheLastDisruption(t *testing.T) {
	const d = 40 * time.Second
	begin := time.Now()
	at := func(s float64) time.Time { return begin.Add(time.Duration(s * float64(time.Second))) }
	tests := []struct {
		name       string
		disrupting bool
		over       float64 // when the last disruption was over; 0: none planned
		now        float64
		tail       time.Duration
		callsOver  bool
	}{
		{"none planned, before the end", false, 0, 39, 30 * time.Second, false},
		{"none planned, at the end", false, 0, 40, 30 * time.Second, true},
		{"over in time", false, 25, 40, 30 * time.Second, true},
		{"still disrupting at the end", true, 0, 45, 30 * time.Second, false},
		{"over late: the tail starts then", false, 38, 40, 38 * time.Second, false},
		{"over late, a quarter later", false, 38, 48, 38 * time.Second, true},
		{"a disrupter stuck far past its time", true, 0, 201, 30 * time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &soak{cfg: config{Duration: d}, begin: begin, disrupting: tt.disrupting}
			if tt.over > 0 {
				s.disruptionsOver = at(tt.over)
			}
			if got := s.tailFrom(); got != tt.tail {
				t.Errorf("tailFrom = %v, want %v", got, tt.tail)
			}
			if got := s.callsOver(at(tt.now)); got != tt.callsOver {
				t.Errorf("callsOver at t+%vs = %v, want %v", tt.now, got, tt.callsOver)
			}
		})
	}
}
