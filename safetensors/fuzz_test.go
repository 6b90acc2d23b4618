package safetensors

import (
	"bytes"
	"testing"
)

// FuzzRead: Read never panics, and what it accepts it writes back to a
// file that reads the same.
func FuzzRead(f *testing.F) {
	f.Add(sample(f))
	f.Add(file(`{"b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}}`, []byte{10, 20}))
	f.Add(file(`{"__metadata__":{"k":"v"}}`, nil))
	f.Add(file(`{"a":{"dtype":"F64","shape":[4611686018427387904,4],"data_offsets":[0,8]}}`, nil))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := ReadHeader(bytes.NewReader(in), 1<<16, int64(len(in)))
		meta, ts, rerr := Read(bytes.NewReader(in), 1<<16)
		if err != nil {
			if rerr == nil {
				t.Fatalf("ReadHeader with the size refused (%v) what Read accepted", err)
			}
			return
		}
		if h.Size != int64(len(in)) {
			t.Fatalf("header size %d for %d bytes", h.Size, len(in))
		}
		if rerr != nil {
			return
		}
		var buf bytes.Buffer
		if err := Write(&buf, meta, ts); err != nil {
			t.Fatalf("Write of what Read accepted: %v", err)
		}
		meta2, ts2, err := Read(bytes.NewReader(buf.Bytes()), 0)
		if err != nil || len(ts2) != len(ts) || len(meta2) != len(meta) {
			t.Fatalf("re-read: %v", err)
		}
		for i := range ts {
			if ts[i].Name != ts2[i].Name || !bytes.Equal(ts[i].Data, ts2[i].Data) {
				t.Fatalf("tensor %d differs after a round trip", i)
			}
		}
	})
}
