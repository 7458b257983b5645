package wait

import (
	"slices"
	"testing"
)

func TestRowsAfterGoOnFromTheLinesReadBeforeADrop(t *testing.T) {
	tests := []struct {
		name   string
		before []string
		rows   []string
		want   []string
		joined bool
	}{
		{name: "the history reaches back past the drop",
			before: []string{"1", "2", "3", "4"}, rows: []string{"2", "3", "4", "5", "6"},
			want: []string{"5", "6"}, joined: true},
		{name: "the drop outran the history",
			before: []string{"1", "2", "3"}, rows: []string{"70", "71", "72"},
			want: []string{"70", "71", "72"}},
		{name: "nothing after the lines read",
			before: []string{"a", "b", "c"}, rows: []string{"a", "b", "c"},
			want: []string{}, joined: true},
		{name: "tabs and trailing spaces as the history shows them",
			before: []string{"x\ty", "z", "end "}, rows: []string{"x       y", "z   ", "end", "more"},
			want: []string{"more"}, joined: true},
		{name: "repeated output: after the last place, and not joined",
			before: []string{"y", "y", "y"}, rows: []string{"y", "y", "y", "y", "done"},
			want: []string{"done"}},
		{name: "fewer lines read than the anchor",
			before: []string{"only"}, rows: []string{"zero", "only", "next"},
			want: []string{"next"}, joined: true},
		{name: "nothing read before the drop",
			before: nil, rows: []string{"a", "b", "", ""},
			want: []string{"a", "b"}},
		{name: "blank rows at the end are left out",
			before: []string{"1", "2", "3"}, rows: []string{"1", "2", "3", "4", "", " "},
			want: []string{"4"}, joined: true},
		{name: "the history begins within the anchor",
			before: []string{"1", "2", "3"}, rows: []string{"2", "3", "4"},
			want: []string{"4"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, joined := rowsAfter(tt.before, tt.rows)
			if !slices.Equal(got, tt.want) || joined != tt.joined {
				t.Errorf("rowsAfter(%q, %q) = %q, %v; want %q, %v", tt.before, tt.rows, got, joined, tt.want, tt.joined)
			}
		})
	}
}
