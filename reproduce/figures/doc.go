// Package figures draws the study's figures from the merged results
// (Write, the figures stage's work): Fig. 3 and its zoom, Fig. 4 and its
// training curves, Fig. 8 per encoding, Fig. 10, the budget ladder, the
// training dynamics and the construction beside CTW. The file names are
// its constants (Fig3File, …), read by the report.
package figures
