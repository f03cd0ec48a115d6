package registry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Def is a local tool defined as a static value: a server lists its tools as
// a slice of Defs and registers them with [AddAll], the one registration
// loop of every local server.
//
// The handler is typed ([Handle]): its input type In and its result type Out
// are checked against the tool's hand-written input schema when the tool is
// built ([Def.Tool]), so a definition whose Go type and schema disagree fails
// at start and in tests. The rules, for In against Schema, property by
// property and recursively through nested objects and array items:
//
//   - In is a struct (or a pointer to one), as every schema is an object.
//   - Every schema property is a JSON field of In (its JSON name, as
//     encoding/json reads it), and every exported JSON field of In is a
//     schema property. The context arguments the pipeline removes
//     ([ContextNames]) are not exempt: a field for one that the schema does
//     not declare would never be set, and is reported as such.
//   - The types agree: each JSON type the schema allows ("type", or the
//     types of its anyOf/oneOf branches; "null" aside, since null decodes to
//     the zero value) is one the field decodes: string, number, integer,
//     boolean, array (a slice or array), object (a struct or a map with
//     string keys). A float field accepts "integer" too; an integer field
//     does not accept "number". Pointers are their element's type. A field
//     of an interface type or json.RawMessage accepts any schema; a schema
//     that allows any JSON value needs such a field.
//   - A required property is a field without omitempty or omitzero: In
//     encodes to valid arguments (as Go callers and tests build them), and a
//     field that may be left out says the property is optional. The reverse
//     is not required: an optional property may be a plain field (its
//     default, or its zero value, is what the handler reads).
//   - A property whose field is a map checks against the map's value type.
//
// Out must be a struct or a pointer to one whose schema derives
// ([jsonschema.For]) without error; [Def.OutputSchema] returns it for the
// tool's snapshot (it is not listed: clients see no output schema).
// Registration checks Out's kind; the derivation, about a millisecond a
// tool, is checked by each server's snapshot test, which derives every
// tool's output schema. The one
// exception is an interface type, for a result that is not the tool's own
// (use_tool returns the outcome of the tool it ran); its schema is true
// (any value).
type Def struct {
	// Name is the tool's own name (in the built-in toolbox, its flat name).
	Name string
	// Title, Description and Annotations are listed as given.
	Title       string
	Description string
	Annotations *mcp.ToolAnnotations
	// ReadOnly marks a tool that changes nothing.
	ReadOnly bool
	// Family decides how results and errors are rendered; it is required.
	Family Family
	// Meta and SelfValidating are [Tool]'s.
	Meta           bool
	SelfValidating bool
	// Schema is the hand-written input schema, a JSON object schema.
	Schema json.RawMessage
	// Handler runs the tool; build it with [Handle].
	Handler Typed
}

// Typed is a handler with its input and result types, built by [Handle].
type Typed struct {
	run     Handler
	in, out reflect.Type
}

// Handle adapts a typed function to a [Def]'s handler: the validated
// arguments are decoded into In (as [Bind] does) and the result is fn's Out.
func Handle[In, Out any](fn func(ctx context.Context, c *Call, in In) (Out, error)) Typed {
	return Typed{
		run: Bind(func(ctx context.Context, c *Call, in In) (any, error) {
			out, err := fn(ctx, c, in)
			if err != nil {
				return nil, err
			}
			return out, nil
		}),
		in:  reflect.TypeFor[In](),
		out: reflect.TypeFor[Out](),
	}
}

// AddAll registers the local tools defs of server in toolbox. Every
// definition is built and checked ([Def.Tool]) before any is added; the
// errors of all of them are reported together.
func AddAll(reg *Registry, toolbox, server string, defs ...Def) error {
	// Checking and compiling a tool's schema is most of a start-up's work;
	// the tools are independent, so they are prepared on every core.
	tools := make([]Tool, len(defs))
	errs := make([]error, len(defs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, d := range defs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t, err := d.Tool(toolbox, server)
			if err == nil {
				err = prepare(&t)
			}
			tools[i], errs[i] = t, err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return reg.addPrepared(tools)
}

// Tool returns the local tool d defines in toolbox and server, after checking
// its input and result types against its schema (see [Def]).
func (d Def) Tool(toolbox, server string) (Tool, error) {
	id := ID{Toolbox: toolbox, Server: server, Tool: d.Name}
	fail := func(err error) (Tool, error) {
		return Tool{}, fmt.Errorf("registry: tool %q: %w", id.Name(), err)
	}
	switch {
	case d.Handler.run == nil:
		return fail(errors.New("no handler (build it with registry.Handle)"))
	case d.Family == "":
		return fail(errors.New("no family"))
	case len(d.Schema) == 0:
		return fail(errors.New("no input schema"))
	}
	// The hand-written schema is checked against the handler's input type
	// where the code is tested (every Def is registered by the tests of
	// Nexus's servers): a built binary cannot change its definitions, and
	// checking them at every start cost about a third of opening Nexus
	// (docs/benchmarks.md, "Start-up").
	if testing.Testing() {
		if err := checkInput(d.Schema, d.Handler.in); err != nil {
			return fail(err)
		}
	}
	if err := checkOutputKind(d.Handler.out); err != nil {
		return fail(err)
	}
	return Tool{
		ID: id, Title: d.Title, Description: d.Description, Annotations: d.Annotations,
		InputSchema: d.Schema, Source: Local, Family: d.Family, ReadOnly: d.ReadOnly,
		Meta: d.Meta, SelfValidating: d.SelfValidating, Handler: d.Handler.run,
	}, nil
}

// OutputSchema is the schema derived from the handler's result type (see
// [Def]), for snapshots; it is not listed.
func (d Def) OutputSchema() (json.RawMessage, error) {
	s, err := outputSchema(d.Handler.out)
	if err != nil {
		return nil, fmt.Errorf("registry: tool %q: %w", d.Name, err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("registry: tool %q output schema: %w", d.Name, err)
	}
	return b, nil
}

// forOptions derive schemas from Go types: json.RawMessage is any JSON value.
func forOptions() *jsonschema.ForOptions {
	return &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[json.RawMessage](): {},
	}}
}

// checkOutputKind checks what registration checks of a result type: that it
// is a struct, a pointer to one or an interface. Deriving its schema costs
// about a millisecond a tool, so it is left to the tool snapshot tests
// ([Def.OutputSchema], which every server's snapshot test calls).
func checkOutputKind(t reflect.Type) error {
	if t == nil {
		return errors.New("no result type")
	}
	if t.Kind() == reflect.Interface {
		return nil
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("result type %s is not a struct, a pointer to one or an interface", t)
	}
	return nil
}

func outputSchema(t reflect.Type) (*jsonschema.Schema, error) {
	if err := checkOutputKind(t); err != nil {
		return nil, err
	}
	if t.Kind() == reflect.Interface {
		return &jsonschema.Schema{}, nil
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s, err := jsonschema.ForType(t, forOptions())
	if err != nil {
		return nil, fmt.Errorf("result type %s: %w", t, err)
	}
	return s, nil
}

// checkInput reports how the Go type in disagrees with the JSON object
// schema (see [Def] for the rules), every mismatch joined in one error.
func checkInput(schema json.RawMessage, in reflect.Type) error {
	if in == nil {
		return errors.New("no input type")
	}
	var hand jsonschema.Schema
	if err := json.Unmarshal(schema, &hand); err != nil {
		return fmt.Errorf("input schema: %w", err)
	}
	t := in
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return fmt.Errorf("input type %s is not a struct", in)
	}
	derived, err := jsonschema.ForType(t, forOptions())
	if err != nil {
		return fmt.Errorf("input type %s: %w", in, err)
	}
	var c checker
	c.object("", &hand, derived, true)
	if err := errors.Join(c.errs...); err != nil {
		return fmt.Errorf("input type %s does not match the input schema: %w", in, err)
	}
	return nil
}

// checker collects the mismatches of a hand-written schema and the schema
// derived from a Go type.
type checker struct{ errs []error }

func (c *checker) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Errorf(format, args...))
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// object checks the properties of hand against the fields of the struct
// that derived describes.
func (c *checker) object(path string, hand, derived *jsonschema.Schema, top bool) {
	for _, name := range sortedKeys(hand.Properties) {
		p := join(path, name)
		field, ok := derived.Properties[name]
		if !ok {
			c.fail("property %s has no field", p)
			continue
		}
		c.value(p, hand.Properties[name], field)
	}
	for _, name := range sortedKeys(derived.Properties) {
		if _, ok := hand.Properties[name]; ok {
			continue
		}
		if top && slices.Contains(ContextNames, name) {
			c.fail("field %s is not a property: the pipeline removes %q before the handler runs unless the schema declares it", join(path, name), name)
			continue
		}
		c.fail("field %s is not a property", join(path, name))
	}
	for _, name := range hand.Required {
		if _, ok := derived.Properties[name]; ok && !slices.Contains(derived.Required, name) {
			c.fail("required property %s is an omitempty or omitzero field", join(path, name))
		}
	}
}

// value checks that the field derived decodes every value hand allows.
func (c *checker) value(path string, hand, derived *jsonschema.Schema) {
	goTypes := types(derived)
	if len(goTypes) == 0 {
		return // an interface or json.RawMessage: any JSON value
	}
	want := types(hand)
	if len(want) == 0 {
		for _, branches := range [][]*jsonschema.Schema{hand.AnyOf, hand.OneOf} {
			for _, b := range branches {
				bt := types(b)
				if len(bt) == 0 {
					c.fail("property %s allows any JSON value (a branch has no type); its field is %v", path, goTypes)
					return
				}
				want = append(want, bt...)
			}
		}
	}
	if len(want) == 0 {
		c.fail("property %s allows any JSON value (no type); its field is %v", path, goTypes)
		return
	}
	for _, w := range want {
		if !slices.Contains(goTypes, w) && (w != "integer" || !slices.Contains(goTypes, "number")) {
			c.fail("property %s is %s; its field is %v", path, w, goTypes)
			return
		}
	}
	if slices.Contains(want, "object") {
		switch {
		case derived.AdditionalProperties == nil || isFalse(derived.AdditionalProperties):
			// A struct: it derives additionalProperties false, a map the
			// schema of its values.
			c.object(path, hand, derived, false)
		default:
			// A map: every property, and any other, is a value of the map.
			for _, name := range sortedKeys(hand.Properties) {
				c.value(join(path, name), hand.Properties[name], derived.AdditionalProperties)
			}
			if ap := hand.AdditionalProperties; ap != nil && !isFalse(ap) {
				c.value(path+".*", ap, derived.AdditionalProperties)
			}
		}
	}
	if slices.Contains(want, "array") && hand.Items != nil && derived.Items != nil {
		c.value(path+"[]", hand.Items, derived.Items)
	}
}

// types are the JSON types s allows, "null" aside.
func types(s *jsonschema.Schema) []string {
	var out []string
	if s.Type != "" {
		out = append(out, s.Type)
	}
	out = append(out, s.Types...)
	return slices.DeleteFunc(out, func(t string) bool { return t == "null" })
}

// isFalse reports whether s is the schema false (nothing is valid).
func isFalse(s *jsonschema.Schema) bool {
	return s.Not != nil && reflect.ValueOf(*s.Not).IsZero()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
