package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docketq/docket/webhook"
)

// startPythonEndpoint runs examples/dispatch/endpoint.py on a free
// loopback port and returns its URL. python3 is required: CI installs it
// (scripts/test.sh), so a missing one fails rather than skips.
func startPythonEndpoint(t *testing.T, secret string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 not found (%v): the HTTP dispatch example endpoint needs it; scripts/test.sh installs it", err)
	}
	cmd := exec.Command(py, filepath.Join("..", "..", "examples", "dispatch", "endpoint.py"), "--port", "0")
	cmd.Env = append(os.Environ(), "DOCKET_DISPATCH_SECRET="+secret)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("endpoint.py stderr:\n%s", stderr.String())
		}
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case l := <-lines:
		var port int
		if _, err := fmt.Sscanf(l, "listening on %d", &port); err != nil {
			t.Fatalf("endpoint.py printed %q", l)
		}
		return fmt.Sprintf("http://127.0.0.1:%d/", port)
	case <-time.After(30 * time.Second):
		t.Fatalf("endpoint.py did not start:\n%s", stderr.String())
	}
	return ""
}

// TestPythonEndpoint_Verify: the example's verifier accepts the Standard
// Webhooks spec vector and refuses it tampered.
func TestPythonEndpoint_Verify(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 not found (%v): scripts/test.sh installs it", err)
	}
	script := `
import sys; sys.path.insert(0, "../../examples/dispatch")
import endpoint
key = endpoint.parse_secret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
h = {"webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek", "webhook-timestamp": "1614265330",
     "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="}
endpoint.verify(key, h, b'{"test": 2432232314}', now=1614265330)
for body, now in ((b'{"test": 2432232315}', 1614265330), (b'{"test": 2432232314}', 1614265330 + 301)):
    try:
        endpoint.verify(key, h, body, now=now)
    except ValueError:
        continue
    sys.exit("accepted a tampered or stale message")
try:
    endpoint.parse_secret("whsec_" + "YWFh" * 7)  # 21 bytes
    sys.exit("accepted a short secret")
except ValueError:
    pass
print("ok")
`
	out, err := exec.Command("python3", "-c", script).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatalf("python verifier: %v\n%s", err, out)
	}
}

// TestDispatch_PythonEndpoint runs HTTP dispatch end to end: docket serve
// with --dispatch-config sends jobs to examples/dispatch/endpoint.py,
// which answers "upper" at once and "sum" with 202 and then reports
// progress and completion (or failure) through the API with the lease
// token.
func TestDispatch_PythonEndpoint(t *testing.T) {
	t.Parallel()
	secret := webhook.NewSecret()
	url := startPythonEndpoint(t, secret)
	dir := t.TempDir()
	conf := map[string]any{
		"allow":         []string{"127.0.0.1"},
		"poll_interval": "100ms",
		"endpoints": []map[string]any{
			{"kind": "upper", "url": url, "secrets": []string{secret}, "timeout": "10s"},
			{"kind": "sum", "url": url, "secrets": []string{secret}},
		},
	}
	b, _ := json.Marshal(conf)
	confPath := filepath.Join(dir, "dispatch.json")
	if err := os.WriteFile(confPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--dispatch-config", confPath},
			env(map[string]string{"DOCKET_DATA_DIR": filepath.Join(dir, "data")}), &stdout, &stderr)
	}()
	srv := readBanner(t, stdout.String, stderr.String)

	upper := enqueueDispatch(t, srv, `{"kind":"upper","args":{"text":"hello, docket"}}`)
	j := waitJob(t, srv, upper, "completed", 60*time.Second)
	if r, _ := j["result"].(map[string]any); r["upper"] != "HELLO, DOCKET" {
		t.Errorf("upper: result %v", j["result"])
	}
	sum := enqueueDispatch(t, srv, `{"kind":"sum","args":{"numbers":[1,2,3.5]}}`)
	j = waitJob(t, srv, sum, "completed", 60*time.Second)
	if r, _ := j["result"].(map[string]any); r["sum"] != 6.5 || j["attempt"] != 1.0 {
		t.Errorf("sum: result %v after %v attempts, want 6.5 after 1", j["result"], j["attempt"])
	}
	neg := enqueueDispatch(t, srv, `{"kind":"sum","args":{"numbers":[1,-2]}}`)
	waitFinal(t, srv, neg, "failed", "negative numbers are not summed")
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "lease lost") {
		t.Errorf("a lease was reported lost:\n%s", stderr.String())
	}
}

func enqueueDispatch(t *testing.T, srv server, body string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.base+"/v1/dispatch/jobs", bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+srv.key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out struct{ Job struct{ ID string } }
	if res.StatusCode != http.StatusAccepted || json.Unmarshal(raw, &out) != nil {
		t.Fatalf("enqueue %s: %d %s", body, res.StatusCode, raw)
	}
	return out.Job.ID
}

// waitFinal polls a job until it is finished and checks its status and
// error message.
func waitFinal(t *testing.T, srv server, id, status, message string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var j map[string]any
		getJSON(t, srv, "/v1/jobs/"+id, &j)
		if st, _ := j["status"].(string); st == "completed" || st == "failed" || st == "cancelled" {
			if st != status || j["error_message"] != message {
				t.Fatalf("job %s: %s %v, want %s %q", id, st, j["error_message"], status, message)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not finished: %v", id, j)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDispatchConfig_Refused: a bad --dispatch-config is a clear error at
// start: a secret under 24 bytes, a URL of another scheme or spelling
// loopback as a number, a bad allow entry, a repeated kind, an args cap
// over the API's body limit.
func TestDispatchConfig_Refused(t *testing.T) {
	t.Parallel()
	good := webhook.NewSecret()
	short := "whsec_" + strings.Repeat("YWFh", 7) // 21 bytes
	for _, tc := range []struct {
		name, file, want string
	}{
		{"short secret", `{"endpoints":[{"kind":"k","url":"https://h.example/","secrets":["` + short + `"]}]}`, "21 bytes, want 24 to 64"},
		{"no secret", `{"endpoints":[{"kind":"k","url":"https://h.example/"}]}`, "no secrets"},
		{"scheme", `{"endpoints":[{"kind":"k","url":"gopher://h.example/","secrets":["` + good + `"]}]}`, `scheme "gopher"`},
		{"numeric host", `{"endpoints":[{"kind":"k","url":"http://2130706433/","secrets":["` + good + `"]}]}`, "not a dotted-quad"},
		{"allow", `{"allow":["localhost"],"endpoints":[{"kind":"k","url":"https://h.example/","secrets":["` + good + `"]}]}`, `allow "localhost"`},
		{"repeated kind", `{"endpoints":[{"kind":"k","url":"https://a.example/","secrets":["` + good + `"]},{"kind":"k","url":"https://b.example/","secrets":["` + good + `"]}]}`, "repeated"},
		{"timeout", `{"endpoints":[{"kind":"k","url":"https://a.example/","secrets":["` + good + `"],"timeout":"soon"}]}`, "invalid duration"},
		{"no endpoints", `{}`, "no endpoints"},
		{"max args", `{"max_args_bytes":2000000,"endpoints":[{"kind":"k","url":"https://a.example/","secrets":["` + good + `"]}]}`, "max_args_bytes 2000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "dispatch.json")
			if err := os.WriteFile(path, []byte(tc.file), 0o600); err != nil {
				t.Fatal(err)
			}
			var stdout, stderr syncBuffer
			err := run(context.Background(), []string{"worker", "--dispatch-config", path},
				env(map[string]string{"DOCKET_DATA_DIR": dir}), &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run: %v, want an error with %q", err, tc.want)
			}
		})
	}
}
