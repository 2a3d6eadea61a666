package graph

import (
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

// TestSchemaDocumented holds schema.graphqls to documenting everything a
// client can select: every type, field and enum value (the playground's
// docs pane and introspection show these texts), and every argument of a
// subscription, whose filters and cursor have no /v1 route to explain them
// (query fields describe their arguments in the field's own text).
func TestSchemaDocumented(t *testing.T) {
	schema := NewExecutableSchema(Config{}).Schema()
	for name, def := range schema.Types {
		if def.BuiltIn || strings.HasPrefix(name, "__") {
			continue
		}
		if strings.TrimSpace(def.Description) == "" {
			t.Errorf("type %s has no description", name)
		}
		for _, f := range def.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			if strings.TrimSpace(f.Description) == "" {
				t.Errorf("%s.%s has no description", name, f.Name)
			}
			for _, a := range f.Arguments {
				if name == "Subscription" && strings.TrimSpace(a.Description) == "" {
					t.Errorf("%s.%s(%s:) has no description", name, f.Name, a.Name)
				}
			}
		}
		if def.Kind == ast.Enum {
			for _, v := range def.EnumValues {
				if strings.TrimSpace(v.Description) == "" {
					t.Errorf("%s.%s has no description", name, v.Name)
				}
			}
		}
	}
	sub := schema.Subscription
	if sub == nil || sub.Fields.ForName("events") == nil {
		t.Fatal("the schema has no Subscription.events")
	}
}
