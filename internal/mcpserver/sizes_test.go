package mcpserver

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tmcp/tmcp/internal/wait"
)

// TestMatchedStatesItsBound: the bound on wait_for_text's matched field is
// written out in its description, which must follow the constant.
func TestMatchedStatesItsBound(t *testing.T) {
	f, _ := reflect.TypeFor[waitForTextOut]().FieldByName("Matched")
	if desc := f.Tag.Get("jsonschema"); !strings.Contains(desc, strconv.Itoa(wait.MaxMatchedBytes)+" bytes") {
		t.Errorf("matched is described as %q, want it to state its bound of %d bytes", desc, wait.MaxMatchedBytes)
	}
}
