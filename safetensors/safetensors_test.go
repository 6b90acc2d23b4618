package safetensors

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// file builds a raw safetensors file from a header string and data.
func file(header string, data []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		meta map[string]string
		ts   []Tensor
	}{
		{"empty", nil, nil},
		{"meta only", map[string]string{"format": "x"}, nil},
		{"f32 and f64", map[string]string{"a": "<&>"}, []Tensor{
			{Name: "w", DType: "F32", Shape: []int{2, 2}, Data: Float32Bytes([]float32{1, -2, float32(math.Inf(1)), 4})},
			{Name: "b", DType: "F64", Shape: []int{3}, Data: Float64Bytes([]float64{math.Pi, 0, -1e300})},
			{Name: "s", DType: "I8", Shape: []int{}, Data: []byte{7}},
			{Name: "z", DType: "F32", Shape: []int{0, 5}, Data: nil},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, tc.meta, tc.ts); err != nil {
				t.Fatal(err)
			}
			if hl := binary.LittleEndian.Uint64(buf.Bytes()); hl%8 != 0 {
				t.Errorf("header length %d not a multiple of 8", hl)
			}
			meta, ts, err := Read(bytes.NewReader(buf.Bytes()), 0)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(meta, tc.meta) {
				t.Errorf("metadata %v, want %v", meta, tc.meta)
			}
			if len(ts) != len(tc.ts) {
				t.Fatalf("%d tensors, want %d", len(ts), len(tc.ts))
			}
			for i, w := range tc.ts {
				g := ts[i]
				if g.Name != w.Name || g.DType != w.DType || !reflect.DeepEqual(g.Shape, w.Shape) || !bytes.Equal(g.Data, w.Data) {
					t.Errorf("tensor %d: %+v, want %+v", i, g, w)
				}
			}
		})
	}
}

func TestWriteFormat(t *testing.T) {
	var buf bytes.Buffer
	err := Write(&buf, map[string]string{"k": "v"}, []Tensor{{Name: "x", DType: "F32", Shape: []int{1}, Data: Float32Bytes([]float32{1})}})
	if err != nil {
		t.Fatal(err)
	}
	// The checksum is the SHA-256 of the header without it followed by
	// the data bytes 00 00 80 3f (this format is fixed: files written by
	// this version must stay readable).
	canon := `{"__metadata__":{"k":"v"},"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`
	sum := sha256.Sum256(append([]byte(canon), 0, 0, 0x80, 0x3f))
	if got := hex.EncodeToString(sum[:]); got != "948a109374ebdcce353999039e45194d11392578e462fc14e23b40c09caca3b6" {
		t.Fatalf("sha256 %s", got)
	}
	h := `{"__metadata__":{"k":"v","vomc.data_sha256":"948a109374ebdcce353999039e45194d11392578e462fc14e23b40c09caca3b6"},"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`
	for len(h)%8 != 0 {
		h += " "
	}
	if want := file(h, []byte{0, 0, 0x80, 0x3f}); !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("got %q\nwant %q", buf.Bytes(), want)
	}
}

func TestWriteErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		ts   []Tensor
		want string
	}{
		{"empty name", []Tensor{{DType: "F32", Shape: []int{}, Data: make([]byte, 4)}}, "invalid tensor name"},
		{"metadata name", []Tensor{{Name: MetadataKey, DType: "F32", Shape: []int{}, Data: make([]byte, 4)}}, "invalid tensor name"},
		{"duplicate", []Tensor{{Name: "a", DType: "U8", Shape: []int{1}, Data: []byte{1}}, {Name: "a", DType: "U8", Shape: []int{1}, Data: []byte{1}}}, "duplicate"},
		{"dtype", []Tensor{{Name: "a", DType: "F33", Shape: []int{1}, Data: []byte{1}}}, "unknown dtype"},
		{"size", []Tensor{{Name: "a", DType: "F32", Shape: []int{2}, Data: make([]byte, 4)}}, "needs 8 bytes"},
		{"negative", []Tensor{{Name: "a", DType: "F32", Shape: []int{-1}}}, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Write(&buf, nil, tc.ts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %d bytes on error", buf.Len())
			}
		})
	}
}

func TestReadMalformed(t *testing.T) {
	f32 := `"dtype":"F32","shape":[2]`
	for _, tc := range []struct {
		name string
		in   []byte
		max  int64
		want string
	}{
		{"short length", []byte{1, 2, 3}, 0, "header length"},
		{"too long", file(`{}`, nil), 1, "exceeds the limit"},
		{"short header", file(`{}`, nil)[:9], 0, "header"},
		{"not json", file(`{x`, nil), 0, "header"},
		{"not object", file(`null`, nil), 0, "not a JSON object"},
		{"array", file(`[]`, nil), 0, "header"},
		{"bad metadata", file(`{"__metadata__":{"a":1}}`, nil), 0, "metadata"},
		{"unknown field", file(`{"a":{`+f32+`,"data_offsets":[0,8],"x":1}}`, make([]byte, 8)), 0, "unknown field"},
		{"no shape", file(`{"a":{"dtype":"F32","data_offsets":[0,4]}}`, make([]byte, 4)), 0, "no shape"},
		{"offsets count", file(`{"a":{`+f32+`,"data_offsets":[0,8,9]}}`, make([]byte, 8)), 0, "data_offsets"},
		{"dtype", file(`{"a":{"dtype":"X","shape":[2],"data_offsets":[0,8]}}`, make([]byte, 8)), 0, "unknown dtype"},
		{"negative dim", file(`{"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}`, make([]byte, 8)), 0, "negative"},
		{"overflow", file(`{"a":{"dtype":"F64","shape":[4611686018427387904,4],"data_offsets":[0,8]}}`, nil), 0, "overflows"},
		{"size mismatch", file(`{"a":{`+f32+`,"data_offsets":[0,4]}}`, make([]byte, 4)), 0, "needs 8 bytes"},
		{"negative offset", file(`{"a":{`+f32+`,"data_offsets":[-8,0]}}`, nil), 0, "needs 8 bytes"},
		{"gap", file(`{"a":{`+f32+`,"data_offsets":[4,12]}}`, make([]byte, 12)), 0, "does not start at byte 0"},
		{"overlap", file(`{"a":{`+f32+`,"data_offsets":[0,8]},"b":{`+f32+`,"data_offsets":[4,12]}}`, make([]byte, 12)), 0, "does not start at byte 8"},
		{"short data", file(`{"a":{`+f32+`,"data_offsets":[0,8]}}`, make([]byte, 5)), 0, "data section"},
		{"huge data", file(`{"a":{"dtype":"U8","shape":[1000000000000],"data_offsets":[0,1000000000000]}}`, make([]byte, 5)), 0, "data section"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Read(bytes.NewReader(tc.in), tc.max)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestReadOrder checks that tensors come back in data order whatever the
// header order, and that a file without a checksum (as earlier versions
// wrote) is read, Header.Checksum telling.
func TestReadOrder(t *testing.T) {
	in := file(`{"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`, []byte{10, 20})
	meta, ts, err := Read(bytes.NewReader(in), 0)
	if err != nil {
		t.Fatal(err)
	}
	if meta != nil || len(ts) != 2 || ts[0].Name != "a" || ts[0].Data[0] != 10 || ts[1].Name != "b" || ts[1].Data[0] != 20 {
		t.Errorf("got %v %+v", meta, ts)
	}
	h, err := ReadHeader(bytes.NewReader(in), 0, int64(len(in)))
	if err != nil || h.Checksum != "" || h.DataSize != 2 || h.Size != int64(len(in)) {
		t.Errorf("header %+v, %v", h, err)
	}
}

// sample is a small valid file with a checksum.
func sample(t testing.TB) []byte {
	var buf bytes.Buffer
	err := Write(&buf, map[string]string{"format": "x"}, []Tensor{
		{Name: "w", DType: "F32", Shape: []int{3, 2}, Data: Float32Bytes([]float32{1, 2, 3, 4, 5, 6})},
		{Name: "b", DType: "F32", Shape: []int{2}, Data: Float32Bytes([]float32{-1, 0.5})},
	})
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestIntegrity: every single-bit flip of a written file is refused (by
// the checksum, which covers the header too, or by the strict parser),
// and so are trailing bytes and truncation, with or without the file
// size.
func TestIntegrity(t *testing.T) {
	in := sample(t)
	if _, _, err := Read(bytes.NewReader(in), 0); err != nil {
		t.Fatal(err)
	}
	hl := 8 + int(binary.LittleEndian.Uint64(in))
	for i := range in {
		for bit := 0; bit < 8; bit++ {
			b := bytes.Clone(in)
			b[i] ^= 1 << bit
			_, _, err := Read(bytes.NewReader(b), 0)
			if err == nil {
				t.Errorf("flip of bit %d of byte %d (header length %d) accepted", bit, i, hl)
				continue
			}
			if i >= hl && !strings.Contains(err.Error(), "checksum mismatch") {
				t.Errorf("data flip %d.%d: error %v, want a checksum mismatch", i, bit, err)
			}
		}
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"trailing junk", append(bytes.Clone(in), 'x'), "trailing junk"},
		{"trailing zeros", append(bytes.Clone(in), make([]byte, 100)...), "trailing junk"},
		{"truncated", in[:len(in)-1], "data section"},
		{"bad checksum format", bytes.Replace(bytes.Clone(in), []byte(`"vomc.data_sha256":"`), []byte(`"vomc.data_sha256":"X`), 1), "lowercase hex"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Read(bytes.NewReader(tc.in), 0)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read: error %v, want one containing %q", err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name string
		size int64
		want string
	}{
		{"size larger", int64(len(in)) + 3, "trailing junk after the data section: 3 extra bytes"},
		{"size smaller", int64(len(in)) - 1, "truncated"},
		{"size below header", 20, "truncated"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadHeader(bytes.NewReader(in), 0, tc.size)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ReadHeader: error %v, want one containing %q", err, tc.want)
			}
		})
	}
	if err := Write(&bytes.Buffer{}, map[string]string{ChecksumKey: "x"}, nil); err == nil {
		t.Error("Write accepted metadata with the checksum key")
	}
}

// TestHeaderAllocation: a header claiming a huge length or huge tensors
// in a tiny input fails without allocating what it claims.
func TestHeaderAllocation(t *testing.T) {
	in := binary.LittleEndian.AppendUint64(nil, DefaultMaxHeader)
	in = append(in, "{}"...)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	if _, _, err := Read(bytes.NewReader(in), 0); err == nil {
		t.Fatal("accepted a short header")
	}
	huge := file(`{"a":{"dtype":"F64","shape":[1000000000000],"data_offsets":[0,8000000000000]}}`, make([]byte, 16))
	if _, _, err := Read(bytes.NewReader(huge), 0); err == nil {
		t.Fatal("accepted a short data section")
	}
	runtime.ReadMemStats(&ms1)
	if d := ms1.TotalAlloc - ms0.TotalAlloc; d > 8<<20 {
		t.Errorf("allocated %d bytes reading %d+%d bytes", d, len(in), len(huge))
	}
}

func TestFloatHelpers(t *testing.T) {
	f32 := []float32{0, -0.5, float32(math.NaN()), float32(math.Inf(-1)), math.MaxFloat32}
	for i, v := range Float32s(Float32Bytes(f32)) {
		if math.Float32bits(v) != math.Float32bits(f32[i]) {
			t.Errorf("float32 %d: %v, want %v", i, v, f32[i])
		}
	}
	f64 := []float64{0, -0.5, math.NaN(), math.Inf(1), math.SmallestNonzeroFloat64}
	for i, v := range Float64s(Float64Bytes(f64)) {
		if math.Float64bits(v) != math.Float64bits(f64[i]) {
			t.Errorf("float64 %d: %v, want %v", i, v, f64[i])
		}
	}
	if got := Float32Bytes([]float32{1}); !bytes.Equal(got, []byte{0, 0, 0x80, 0x3f}) {
		t.Errorf("Float32Bytes(1) = %v", got)
	}
	if len(Float32s(make([]byte, 7))) != 1 || len(Float64s(make([]byte, 15))) != 1 {
		t.Error("partial values not ignored")
	}
}

// TestEmptyTensorName: a header with a tensor named "" (which Write
// refuses) is an error, not a tensor (found by FuzzRead).
func TestEmptyTensorName(t *testing.T) {
	hdr := []byte(`{"":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`)
	var buf bytes.Buffer
	binary.Write(&buf, binary.LittleEndian, uint64(len(hdr)))
	buf.Write(hdr)
	buf.Write(make([]byte, 4))
	if _, _, err := Read(&buf, 1<<20); err == nil || !strings.Contains(err.Error(), "empty name") {
		t.Errorf("error %v", err)
	}
}
