package webtest

import (
	_ "embed" // axe-core
	"fmt"
	"strings"
)

// AxeVersion is the vendored axe-core (testdata/axe-core).
const AxeVersion = "4.14.1"

//go:embed testdata/axe-core/axe.min.js
var axeSource string

// AxeViolation is one rule that axe-core found broken, with the elements
// that break it.
type AxeViolation struct {
	ID      string `json:"id"`
	Impact  string `json:"impact"` // minor, moderate, serious, critical
	Help    string `json:"help"`
	Targets []string
}

func (v AxeViolation) String() string {
	return fmt.Sprintf("%s (%s): %s at %s", v.ID, v.Impact, v.Help, strings.Join(v.Targets, ", "))
}

// Axe runs axe-core's WCAG 2.1 A and AA rules and best practices on the
// page as it is now and returns what they find. The script goes in
// through the DevTools protocol, so the page's Content-Security-Policy
// stays as strict as it is.
func (p *Page) Axe() []AxeViolation {
	p.t.Helper()
	var loaded bool
	p.Eval(`typeof window.axe === "object"`, &loaded)
	if !loaded {
		p.Eval(axeSource+"\n;undefined", nil)
	}
	var out []AxeViolation
	p.Eval(`axe.run(document, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]}})
		.then((r) => r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
			Targets: v.nodes.map((n) => n.target.join(" "))})))`, &out)
	return out
}

// Serious returns the violations of serious or critical impact.
func Serious(vs []AxeViolation) []AxeViolation {
	var out []AxeViolation
	for _, v := range vs {
		if v.Impact == "serious" || v.Impact == "critical" {
			out = append(out, v)
		}
	}
	return out
}
