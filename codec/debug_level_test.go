package codec

import "testing"

func TestSetDebugLevel(t *testing.T) {
	for _, v := range Versions {
		in := SetDebugLevelRequest{Level: 5}
		var got SetDebugLevelRequest
		body := miscRoundTrip(t, "SetDebugLevelRequest", &in, &got, &in, v)
		miscSameBytes(t, "setdebug debug", body, []byte{0, 0, 0, 5})
		miscTruncations(t, "SetDebugLevelRequest", func() miscCodec { return new(SetDebugLevelRequest) }, body, v)
		miscZeroAlloc(t, "SetDebugLevelRequest", &got, body, v)
	}
}

func FuzzDecodeSetDebugLevelRequest(f *testing.F) {
	miscSeed(f, &SetDebugLevelRequest{Level: 3})
	f.Fuzz(func(t *testing.T, v uint16, b []byte) {
		miscFuzzBody(t, v, b, func() miscCodec { return new(SetDebugLevelRequest) })
	})
}
