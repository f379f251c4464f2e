package docs_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// TestOperatorsGuideFlagTables: the operator guide's flag tables ("###
// kube-proxy flags", "### Windows (winkernel) flags", "### hnsproxy
// flags") have a row for every flag of the matching --help section, no
// row for a flag hnsproxy does not have, and each row's default is the
// flag's (where the flag has one: an empty default is explained in words,
// such as "host name"). A row may name several flags, with their defaults
// in the same order, comma-separated.
func TestOperatorsGuideFlagTables(t *testing.T) {
	fss := cliflag.NamedFlagSets{}
	options.NewOptions().AddFlags(&fss)
	for heading, section := range map[string]string{
		"### kube-proxy flags":          options.SectionKubeProxy,
		"### Windows (winkernel) flags": options.SectionWinkernel,
		"### hnsproxy flags":            options.SectionHNSProxy,
	} {
		rows := flagRows(t, doctest.Section(t, "docs/operators.md", heading), heading)
		fs := fss.FlagSets[section]
		fs.VisitAll(func(f *pflag.Flag) {
			r, ok := rows[f.Name]
			if !ok {
				t.Errorf("--%s (--help section %q) has no row under %q in docs/operators.md", f.Name, section, heading)
				return
			}
			// A default that differs off Windows is named in the row.
			if f.DefValue != "" && !sameDefault(r.def, f.DefValue) && !strings.Contains(r.line, "`"+f.DefValue+"`") {
				t.Errorf("docs/operators.md %q: --%s defaults to %q, the flag to %q", heading, f.Name, r.def, f.DefValue)
			}
		})
		for name := range rows {
			if !hasFlag(&fss, name) && name != "version" { // --version is the command's own
				t.Errorf("docs/operators.md %q has a row for --%s, which hnsproxy does not have", heading, name)
			}
		}
	}
}

var flagName = regexp.MustCompile("`--([a-z0-9-]+)`")

func hasFlag(fss *cliflag.NamedFlagSets, name string) bool {
	for _, fs := range fss.FlagSets {
		if fs.Lookup(name) != nil {
			return true
		}
	}
	return false
}

type flagRow struct{ def, line string }

// flagRows reads the table of a heading's section: each flag named in a row's first
// cell, with its default from the second cell.
func flagRows(t *testing.T, section, heading string) map[string]flagRow {
	t.Helper()
	rows := map[string]flagRow{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(line, "| `--") {
			continue
		}
		names := flagName.FindAllStringSubmatch(cells[1], -1)
		defs := strings.Split(cells[2], ",")
		for i, m := range names {
			def := ""
			if len(defs) == len(names) {
				def = strings.Trim(strings.TrimSpace(defs[i]), "`")
			}
			rows[m[1]] = flagRow{def, line}
		}
	}
	if len(rows) == 0 {
		t.Fatalf("docs/operators.md %q: no flag rows found", heading)
	}
	return rows
}

// sameDefault compares a documented default with a flag's, reading
// durations as durations ("5m" is "5m0s").
func sameDefault(doc, flag string) bool {
	if doc == flag {
		return true
	}
	d, err1 := time.ParseDuration(doc)
	f, err2 := time.ParseDuration(flag)
	return err1 == nil && err2 == nil && d == f
}
