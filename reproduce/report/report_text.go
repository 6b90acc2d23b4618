package report

import (
	"strings"
	"text/template"
)

// ReportTextFile is the report as plain text (report.html without its
// images): for reading in a terminal, diffing two runs, or committing
// beside the figures.
const ReportTextFile = "report.txt"

// reportTextTmpl renders reportData as text: headings, paragraphs, and
// table rows as cells separated by " | ".
var reportTextTmpl = template.Must(template.New("report.txt").Funcs(template.FuncMap{
	"row": func(cells []string) string { return strings.Join(cells, " | ") + " |" },
}).Parse(`{{.Title}}

Reproduction of “An Information-Theoretic Approach to Understanding Transformers’ In-Context Learning of Variable-Order Markov Chains”, generated {{.Generated}} by vomc reproduce from data drawn in this run (the figures are in report.html and figures/).

Summary

method | window loss | second half | excess over {{.Ref}} (window) | excess over {{.Ref}} (second half) |{{if .CTWCol}} excess over CTW (second half) |{{end}}{{if gt .Seeds 1}} second half, across seeds | excess (second half), across seeds |{{end}} training time | parameters | note |
{{$seeds := .Seeds}}{{$ctw := .CTWCol}}{{range .Summary}}{{.Method}} | {{.Window}} | {{.Second}} | {{.ExcessWindow}} | {{.ExcessSecond}} |{{if $ctw}} {{.CTWSecond}} |{{end}}{{if gt $seeds 1}} {{.SeedSecond}} | {{.SeedExcessSecond}} |{{end}} {{.Time}} | {{.Params}} | {{.Note}} |
{{end}}
{{.SummaryNote}}
{{range .Figures}}
== {{.Title}}
{{if .Missing}}
Missing: {{.Missing}}
{{end}}{{if .Claim}}
Paper: {{.Claim}}
{{end}}{{if .Found}}
This run ({{if not .Claim}}a description{{else if .Agrees}}agrees{{else}}differs{{end}}): {{.Found}}
{{end}}{{if .Summary}}
Verdict: {{.Summary}}.
{{end}}{{if .Checks}}
part of the claim | verdict | numbers (second-half excess over {{$.Ref}}, nats/symbol, 95% CI; p-values Holm-adjusted across the figure's tests) |
{{range .Checks}}{{.Claim}} | {{.Verdict}} | {{.Numbers}} |
{{end}}{{end}}{{range .Tables}}
{{.Caption}}
{{if .Rows}}{{row .Head}}
{{range .Rows}}{{row .}}
{{end}}{{end}}{{end}}{{end}}
== Cost

{{.Cost}}

stage | hash | seconds | status |
{{range .Stages}}{{.Name}} | {{.Hash}} | {{.Seconds}} | {{.Status}} |
{{end}}
== Versions

{{range .Versions}}{{index . 0}}: {{index . 1}}
{{end}}
== Configuration (preset {{.Preset}}, after overrides)

{{.ConfigJSON}}
`))
