package webhook_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/docketq/docket/webhook"
)

// A sender signs a message; a receiver holding the same secret verifies
// the headers against the raw body.
func ExampleSigner() {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	signer, err := webhook.NewSigner(secret)
	if err != nil {
		panic(err)
	}
	body := []byte(`{"test": 2432232314}`)
	sent := time.Unix(1614265330, 0)
	h := http.Header{}
	signer.SetHeaders(h, "msg_p5jXN8AQM9LWM0D4loKWxJek", sent, body)
	fmt.Println(h.Get(webhook.HeaderSignature))

	verifier, err := webhook.NewVerifier(secret)
	if err != nil {
		panic(err)
	}
	verifier.Now = func() time.Time { return sent.Add(time.Minute) }
	fmt.Println(verifier.Verify(h, body))
	fmt.Println(verifier.Verify(h, []byte(`{"test": 1}`)))
	// Output:
	// v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=
	// <nil>
	// webhook: no matching signature
}
