package plot_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/vomc/vomc/eval"
	"github.com/vomc/vomc/plot"
	"github.com/vomc/vomc/predict"
)

func ExampleLossVsPosition() {
	// Evaluate three methods on 50 windows of length 512 …
	preds := []predict.Predictor{uniform{3}, markov{"unigram", 3, 0}, markov{"CTW-like order-2", 3, 2}}
	res, err := eval.Evaluate(context.Background(), windows(1, 50, 512, 3), 3, preds, eval.Config{Reference: "CTW-like order-2"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// … and plot loss vs position with a 15-position moving average and the
	// excess over the CTW-like reference stacked below.
	fig, err := plot.LossVsPosition(res, plot.Options{Smooth: 15, Excess: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	dir, err := os.MkdirTemp("", "vomc-plot-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	for _, name := range []string{"fig3.png", "fig3.svg"} {
		if err := fig.Save(filepath.Join(dir, name), 7*plot.Inch, 5*plot.Inch); err != nil {
			fmt.Println(err)
			return
		}
	}
	fmt.Println("saved")
	// Output: saved
}
