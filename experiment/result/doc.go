// Package result is an arm's figures: the results' types, each figure
// declared once (figure_table.go), the results' contract, the windows, the
// medians of repeated runs and the gates that read them.
package result
