package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// addTool registers a tool's typed handler on m as a raw handler
// (mcp.Server.AddTool) that does what the SDK's typed wrapper
// (mcp.AddTool) does, with less work. The arguments are checked against
// the input schema, resolved once (rs), and its defaults applied, as the
// wrapper does (applyInputSchema), but decoded with encoding/json, where
// the SDK's decoder took a fresh 32 KiB buffer for each of its two
// decodes. The reply is made by structured: the wrapper would encode
// the handler's Out, decode that into generic maps, check them against
// the output schema and encode them again, about 8 ms of CPU for a
// listing of 1,000 panes, to check that values of tmcp's own types fit
// schemas derived from those types. A compact output schema names the
// fields and nothing more (compactOutput); the types docs/TOOLS.md gives
// them are those encoding/json writes, except that a nil slice, map or
// pointer is null: nonNull lists those fields, and structured refuses a
// reply that holds one.
func addTool[In, Out any](m *mcp.Server, t *mcp.Tool, rs *jsonschema.Resolved, nonNull []schemaField, h mcp.ToolHandlerFor[In, Out]) {
	m.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, err := applyInputSchema(rs, req.Params.Arguments)
		if err != nil {
			return toolFailure(err), nil
		}
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return toolFailure(err), nil
		}
		res, out, err := h(ctx, req, in)
		if err != nil {
			if wireErr, ok := err.(*jsonrpc.Error); ok {
				return nil, wireErr // a protocol error, as the wrapper passes it on
			}
			return toolFailure(err), nil
		}
		return structured(res, out, nonNull)
	})
}

// toolFailure is the result of a call that failed, as the wrapper makes it.
func toolFailure(err error) *mcp.CallToolResult {
	var res mcp.CallToolResult
	res.SetError(err)
	return &res
}

// applyInputSchema takes a call's arguments through the steps the SDK's
// wrapper takes them through before the handler sees them (its
// applySchema, which it does not export), with its messages: an object
// ({} when there are none or they are null), the schema's defaults
// applied, then validation. Batches check each of their calls with it too.
func applyInputSchema(rs *jsonschema.Resolved, args json.RawMessage) (json.RawMessage, error) {
	v := map[string]any{}
	if len(args) > 0 {
		if err := json.Unmarshal(args, &v); err != nil {
			return nil, fmt.Errorf("validating \"arguments\": unmarshaling arguments: %w", err)
		}
	}
	if v == nil {
		// "arguments": null, taken as none: the wrapper's defaults step
		// panics on it (SDK v1.8.0), taking the server down.
		v = map[string]any{}
	}
	var inst any = v
	if err := rs.ApplyDefaults(&inst); err != nil {
		return nil, fmt.Errorf("validating \"arguments\": applying schema defaults:\n%w", err)
	}
	if err := rs.Validate(&inst); err != nil {
		return nil, fmt.Errorf("validating \"arguments\": %w", err)
	}
	b, err := json.Marshal(inst)
	if err != nil {
		return nil, fmt.Errorf("validating \"arguments\": marshalling with defaults: %v", err)
	}
	return b, nil
}

// structured returns res with out as its structured content, encoded once,
// and, when the handler gave no content, that same JSON as its one text
// block: what the SDK's wrapper sends. A result that asks the client for
// input carries neither, as with the wrapper. A field that would be null
// where the output schema wants a value is an error of the call, as the
// wrapper's check made it: an error of the protocol, not of the tool.
func structured[Out any](res *mcp.CallToolResult, out Out, nonNull []schemaField) (*mcp.CallToolResult, error) {
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	if res.InputRequests != nil {
		return res, nil
	}
	v := reflect.ValueOf(&out).Elem()
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v = reflect.Zero(v.Type().Elem()) // as the wrapper does: {} rather than null
		} else {
			v = v.Elem()
		}
	}
	for _, f := range nonNull {
		if fv, err := v.FieldByIndexErr(f.index); err == nil && fv.IsNil() {
			return nil, fmt.Errorf("validating tool output: %s is null, want %s", f.name, f.typ)
		}
	}
	b, err := json.Marshal(v.Interface())
	if err != nil {
		return nil, fmt.Errorf("marshaling output: %w", err)
	}
	res.StructuredContent = json.RawMessage(b)
	switch {
	case res.Content == nil:
		res.Content = []mcp.Content{&mcp.TextContent{Text: string(b)}}
	case len(b) == 0 || b[0] != '{':
		// For clients that read only content, as the wrapper does.
		res.Content = append(res.Content, &mcp.TextContent{Text: string(b)})
	}
	return res, nil
}

// schemaField is a field of an output type that the output schema types
// and that can be nil: a slice, map, pointer or interface whose JSON is
// not left out when empty.
type schemaField struct {
	name  string // its JSON name
	typ   string // its type in the schema
	index []int  // as reflect.Value.FieldByIndex takes it
}

// nonNullFields returns the fields of t, a struct or a pointer to one, to
// which schema, t's schema uncompacted, gives a type other than null and
// that a value of t may hold as null.
func nonNullFields(t reflect.Type, schema *jsonschema.Schema) []schemaField {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || schema == nil {
		return nil
	}
	var out []schemaField
	for _, f := range jsonFields(t) {
		p := schema.Properties[f.name]
		if p == nil || f.omitted {
			continue
		}
		typ := plainType(p)
		if typ == "" || typ == "null" {
			continue
		}
		switch f.field.Type.Kind() {
		case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
			out = append(out, schemaField{name: f.name, typ: typ, index: f.field.Index})
		}
	}
	return out
}

// jsonField is a field of a struct as encoding/json writes it.
type jsonField struct {
	name    string
	omitted bool // omitempty or omitzero: an empty value is left out
	field   reflect.StructField
}

// jsonFields returns the fields encoding/json writes for struct type t,
// those of embedded structs included, by their JSON names.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for _, f := range reflect.VisibleFields(t) {
		tag, tagged := f.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" && opts == "" || f.Anonymous && !tagged {
			continue // unexported, left out, or an embedded struct whose fields are listed
		}
		if name == "" {
			name = f.Name
		}
		omitted := false
		for o := range strings.SplitSeq(opts, ",") {
			omitted = omitted || o == "omitempty" || o == "omitzero"
		}
		out = append(out, jsonField{name: name, omitted: omitted, field: f})
	}
	return out
}
