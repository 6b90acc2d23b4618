// Package report writes the study's report (Write, the report stage's
// work: report.html and report.txt) from the merged results, the figures
// and the stages' records. Per figure it states what the paper claims and
// the verdict this run's numbers give (findFig3, findFig4, fig5Section,
// fig8Section, findFig10, findConstruct, ladderSection, dynamicsSection);
// the verdict rules are report_stats.go (paired tests with one margin,
// Holm-adjusted across a figure's checks) and report_verdicts.go (Finding,
// seeds as the unit); report_page.go and report_text.go are the HTML and
// text templates.
package report
