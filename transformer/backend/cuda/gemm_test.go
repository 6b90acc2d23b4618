package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vomc/vomc/transformer/backend"
	"github.com/vomc/vomc/transformer/backend/cpu"
	"github.com/vomc/vomc/transformer/kernels"
)

// gemmShapes are checkGemm's (M, N, K): partial edge tiles, one K split
// and several. gemmShapesShort, the emulator's under -short, reach the
// same kernels and paths on fewer products: the last splits K on both
// tiles (64: 4 chunks, 128: 2), each with a partial last chunk.
var (
	gemmShapes      = [][3]int{{1, 1, 1}, {70, 33, 20}, {130, 129, 700}, {200, 140, 5000}}
	gemmShapesShort = [][3]int{{1, 1, 1}, {70, 33, 20}, {130, 70, 1030}}
)

// checkGemm compares be.gemm with a float64 product for every tile choice
// and layout on the shapes.
func checkGemm(t *testing.T, be *Backend, shapes [][3]int) {
	t.Helper()
	r := rand.New(rand.NewPCG(5, 6))
	for _, sh := range shapes {
		M, N, K := sh[0], sh[1], sh[2]
		for _, tile := range []int{64, 128} {
			for _, layout := range []string{"NT", "NN", "TN"} {
				for _, beta := range []float32{0, 1} {
					a, b, c0 := randSlice(r, M*K), randSlice(r, K*N), randSlice(r, M*N)
					// element (m,k) of A and (k,n) of B for the layout
					var sam, sak, sbk, sbn int
					switch layout {
					case "NT": // A (M,K) rows, B given as (N,K) rows
						sam, sak, sbk, sbn = K, 1, 1, K
					case "NN": // A (M,K), B (K,N)
						sam, sak, sbk, sbn = K, 1, N, 1
					case "TN": // A given as (K,M), B (K,N)
						sam, sak, sbk, sbn = 1, M, N, 1
					}
					want := make([]float64, M*N)
					for m := 0; m < M; m++ {
						for n := 0; n < N; n++ {
							s := float64(beta) * float64(c0[m*N+n])
							for k := 0; k < K; k++ {
								s += float64(a[m*sam+k*sak]) * float64(b[k*sbk+n*sbn])
							}
							want[m*N+n] = s
						}
					}
					at, bt, ct := upload(t, be, a), upload(t, be, b), upload(t, be, c0)
					gemmTile = tile
					be.enter()
					be.gemm(be.dev(at), be.dev(bt), be.dev(ct), M, N, K, sam, sak, sbk, sbn, N, beta)
					be.exit()
					gemmTile = 0
					got := backend.ToHost(be, ct)
					what := fmt.Sprintf("gemm %dx%dx%d %s beta=%v tile %d", M, N, K, layout, beta, tile)
					for i := range want {
						if d := math.Abs(float64(got[i]) - want[i]); !(d <= 1e-5*math.Sqrt(float64(K))*(1+math.Abs(want[i]))) {
							t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], want[i])
						}
					}
					if err := backend.FreeAll(be, at, bt, ct); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
}

func randSlice(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

func upload(t *testing.T, be backend.Backend, x []float32) backend.Tensor {
	t.Helper()
	ts, err := backend.AllocTensor(be, len(x))
	if err != nil {
		t.Fatal(err)
	}
	be.Upload(ts, x)
	return ts
}

// TestGemm checks the GEMM kernels on the GPU.
func TestGemm(t *testing.T) {
	be := openGPU(t)
	defer be.Close()
	checkGemm(t, be, gemmShapes)
}

// checkAttention compares be's attention forward and backward with the
// CPU backend's for every head-size instance (and head sizes that are not
// multiples of 4), with T beyond one tile; dqkv starts as NaN (both set
// it).
func checkAttention(t *testing.T, be *Backend) {
	t.Helper()
	ref := cpu.New(kernels.Default())
	defer ref.Close()
	r := rand.New(rand.NewPCG(7, 8))
	for _, sh := range [][4]int{{2, 70, 6, 2}, {1, 130, 16, 2}, {2, 67, 64, 2}, {1, 97, 80, 2}, {1, 70, 64, 1}, {1, 40, 128, 1}} {
		B, T, C, NH := sh[0], sh[1], sh[2], sh[3]
		qkv, dout := randSlice(r, B*T*3*C), randSlice(r, B*T*C)
		d0 := randSlice(r, B*T*3*C)
		for i := range d0 { // AttentionBackward sets dqkv: what it held must not count
			d0[i] = float32(math.NaN())
		}
		run := func(b backend.Backend) (out, lse, dqkv []float32) {
			q, g, dq := upload(t, b, qkv), upload(t, b, dout), upload(t, b, d0)
			o, err := backend.AllocTensor(b, B*T*C)
			if err != nil {
				t.Fatal(err)
			}
			l, err := backend.AllocTensor(b, B*NH*T)
			if err != nil {
				t.Fatal(err)
			}
			b.AttentionForward(o, l, q, B, T, C, NH)
			b.AttentionBackward(dq, g, q, l, B, T, C, NH)
			out, lse, dqkv = backend.ToHost(b, o), backend.ToHost(b, l), backend.ToHost(b, dq)
			if err := backend.FreeAll(b, q, g, dq, o, l); err != nil {
				t.Fatal(err)
			}
			return out, lse, dqkv
		}
		wo, wl, wd := run(ref)
		gotOut, gl, gd := run(be)
		what := fmt.Sprintf("attention B=%d T=%d C=%d NH=%d (head size %d)", B, T, C, NH, C/NH)
		for _, c := range []struct {
			name      string
			got, want []float32
		}{{"out", gotOut, wo}, {"lse", gl, wl}, {"dqkv", gd, wd}} {
			for i := range c.want {
				if d := math.Abs(float64(c.got[i] - c.want[i])); !(d <= 2e-5*(1+math.Abs(float64(c.want[i])))) {
					t.Fatalf("%s %s[%d] = %v, CPU %v", what, c.name, i, c.got[i], c.want[i])
				}
			}
		}
	}
}

// TestAttention checks the attention kernels against the CPU on the GPU.
func TestAttention(t *testing.T) {
	be := openGPU(t)
	defer be.Close()
	checkAttention(t, be)
}
