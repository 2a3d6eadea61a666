package main

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/cryptointel/cryptointel/app"
)

// configBinding ties one app.Config field to its flag and environment
// variable. Flags win over the environment, the environment over defaults.
type configBinding struct {
	setting app.Setting
	flag    *pflag.Flag
	value   *fieldValue
}

// bindConfig registers a flag on fs for every app.Config field of a
// supported type (string, bool, int, int64, float64, time.Duration,
// []string) whose name is in only, or every such field when only is nil.
// Flags are named after the env variable in kebab case (DB_MAX_CONNS →
// --db-max-conns); their help is the field's doc comment and their default
// is app.DefaultConfig's. Fields added to app.Config are picked up without
// touching the CLI.
func bindConfig(fs *pflag.FlagSet, cfg *app.Config, only map[string]bool) []*configBinding {
	defaults := reflect.ValueOf(app.DefaultConfig())
	target := reflect.ValueOf(cfg).Elem()
	var out []*configBinding
	for _, s := range app.Settings() {
		if only != nil && !only[s.Field] {
			continue
		}
		field := target.FieldByName(s.Field)
		if !field.IsValid() || !supportedKind(field) {
			continue
		}
		field.Set(defaults.FieldByName(s.Field))
		v := &fieldValue{field: field}
		name := strings.ToLower(strings.ReplaceAll(s.Env, "_", "-"))
		usage := s.Doc + " [env " + s.Env + "]"
		f := fs.VarPF(v, name, "", usage)
		if field.Kind() == reflect.Bool {
			f.NoOptDefVal = "true" // a bare --demo means --demo=true
		}
		out = append(out, &configBinding{setting: s, flag: f, value: v})
	}
	return out
}

// applyEnv fills every binding whose flag was not given from its
// environment variable, if set.
func applyEnv(bindings []*configBinding, getenv func(string) string) error {
	for _, b := range bindings {
		if b.flag.Changed {
			continue
		}
		if env := getenv(b.setting.Env); env != "" {
			if err := b.value.Set(env); err != nil {
				return fmt.Errorf("invalid %s=%q: %w", b.setting.Env, env, err)
			}
		}
	}
	return nil
}

var durationType = reflect.TypeFor[time.Duration]()

func supportedKind(v reflect.Value) bool {
	if v.Type() == durationType {
		return true
	}
	switch v.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64, reflect.Float64:
		return true
	case reflect.Slice:
		return v.Type().Elem().Kind() == reflect.String
	}
	return false
}

// fieldValue is a pflag.Value writing into one app.Config field.
type fieldValue struct {
	field reflect.Value
}

// String returns the field's current value as a flag would spell it.
func (v *fieldValue) String() string {
	if v.field.Type() == durationType {
		return time.Duration(v.field.Int()).String()
	}
	switch v.field.Kind() {
	case reflect.String:
		return v.field.String()
	case reflect.Bool:
		return strconv.FormatBool(v.field.Bool())
	case reflect.Int, reflect.Int64:
		return strconv.FormatInt(v.field.Int(), 10)
	case reflect.Float64:
		return strconv.FormatFloat(v.field.Float(), 'g', -1, 64)
	case reflect.Slice:
		return strings.Join(v.field.Interface().([]string), ",")
	}
	return ""
}

// Set parses s into the field.
func (v *fieldValue) Set(s string) error {
	if v.field.Type() == durationType {
		d, err := time.ParseDuration(s)
		if err != nil {
			return err
		}
		v.field.SetInt(int64(d))
		return nil
	}
	switch v.field.Kind() {
	case reflect.String:
		v.field.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return err
		}
		v.field.SetBool(b)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return err
		}
		v.field.SetInt(n)
	case reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return err
		}
		v.field.SetFloat(f)
	case reflect.Slice:
		var parts []string
		for _, p := range strings.Split(s, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		v.field.Set(reflect.ValueOf(parts))
	}
	return nil
}

// Type names the value's type in help output.
func (v *fieldValue) Type() string {
	if v.field.Type() == durationType {
		return "duration"
	}
	switch v.field.Kind() {
	case reflect.Float64:
		return "float"
	case reflect.Slice:
		return "strings"
	}
	return v.field.Kind().String()
}
