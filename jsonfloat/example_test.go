package jsonfloat_test

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/vomc/vomc/jsonfloat"
)

func Example() {
	b, _ := json.Marshal(struct {
		Loss   jsonfloat.Float  `json:"loss"`
		Losses jsonfloat.Floats `json:"losses"`
	}{jsonfloat.Float(math.Inf(1)), []float64{0.5, math.NaN()}})
	fmt.Println(string(b))
	// Output: {"loss":"+Inf","losses":[0.5,"NaN"]}
}
