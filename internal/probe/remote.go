package probe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/textproto"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Remote probes from a remote host, through the argv that runs a command
// there (`ssh … -- HOST`, sharing the host's master connection). The
// command line it adds is the constant `sh -s`: the script and the target
// go on ssh's stdin, so nothing a model sends becomes part of an ssh
// command line, and any login shell (fish, csh) starts the POSIX sh.
//
// The far side needs a POSIX sh and, for an HTTP probe, curl; for a TCP
// probe, bash (its /dev/tcp) or nc. `timeout`, where present, bounds a
// TCP probe there too; tmcp bounds the ssh process itself either way.
type Remote struct {
	Transport []string
}

const (
	// remoteGrace is what a remote probe may take past its own bound: the
	// ssh session's set-up on the shared connection.
	remoteGrace = time.Second
	// maxHeadBytes bounds what is read of a response before its body.
	maxHeadBytes = 16 << 10
	// maxStderr bounds what is kept of the far side's error output.
	maxStderr = 4 << 10
	// needsStatus is the status the script exits with when the far side
	// lacks what the probe needs (its message says what).
	needsStatus = 3
	// sshFailed is ssh's own status when it cannot connect.
	sshFailed = 255
	// timedOut is the status of a command that timeout(1) ended.
	timedOut = 124
)

// remoteScript probes on the far side. Its variables are set in front of
// it, each quoted for sh; it runs as one braced block, so sh has read all
// of it before anything runs, and every command's stdin is /dev/null.
const remoteScript = `{
if command -v timeout >/dev/null 2>&1; then t="timeout $secs"; else t=; fi
if [ -n "$url" ]; then
	command -v curl >/dev/null 2>&1 || { echo "tmcp-probe: an HTTP probe needs curl on this host" >&2; exit 3; }
	exec curl -sS -i -A tmcp-probe --connect-timeout "$secs" -m "$secs" $insecure --url "$url" </dev/null
elif command -v bash >/dev/null 2>&1; then
	exec $t bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$host" "$port" </dev/null
elif command -v nc >/dev/null 2>&1; then
	exec $t nc -z -w "$secs" "$host" "$port" </dev/null
fi
echo "tmcp-probe: a TCP probe needs bash or nc on this host" >&2; exit 3
}
`

// Probe checks t once on the far side, within MaxTimeout (and the ssh
// session's set-up) and ctx.
func (r Remote) Probe(ctx context.Context, t Target) Result {
	d := timeout(ctx)
	ctx, cancel := context.WithTimeout(ctx, d+remoteGrace)
	defer cancel()
	argv := append(append([]string(nil), r.Transport...), "sh", "-s")
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(script(t, d))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = remoteGrace
	var stderr bytes.Buffer
	cmd.Stderr = &limitedWriter{w: &stderr, n: maxStderr}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return Result{Detail: bound("probing over ssh: " + err.Error())}
	}
	if err := cmd.Start(); err != nil {
		return Result{Detail: bound("probing over ssh: " + err.Error())}
	}
	out, _ := io.ReadAll(io.LimitReader(stdout, maxHeadBytes+MaxBodyBytes))
	if len(out) == maxHeadBytes+MaxBodyBytes {
		cancel() // what more it has to say goes unread
	}
	err = cmd.Wait()
	if t.HTTP() {
		if res, ok := parseResponse(t, out); ok {
			return res
		}
	}
	status := -1
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		status = 0
	case errors.As(err, &exitErr):
		status = exitErr.ExitCode()
	}
	return remoteFailure(t, status, stderr.String())
}

// script is the far side's input: the target's variables, then the probe.
func script(t Target, d time.Duration) string {
	host, port, _ := net.SplitHostPort(t.Addr)
	insecure := ""
	if t.Insecure {
		insecure = "-k"
	}
	secs := strconv.Itoa(int(math.Ceil(d.Seconds())))
	return fmt.Sprintf("url=%s host=%s port=%s secs=%s insecure=%s\n%s",
		quote(t.URL), quote(host), quote(port), secs, insecure, remoteScript)
}

// quote returns s as one word for sh, inside single quotes.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// parseResponse reads curl -i's output: interim (1xx) answers, then the
// answer's status line, headers and body.
func parseResponse(t Target, out []byte) (Result, bool) {
	br := bufio.NewReader(bytes.NewReader(out))
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return Result{}, false
		}
		// "HTTP/1.1 200 OK" or "HTTP/2 200"
		fields := strings.Fields(line)
		if len(fields) < 2 || !strings.HasPrefix(fields[0], "HTTP/") {
			return Result{}, false
		}
		status, err := strconv.Atoi(fields[1])
		if err != nil {
			return Result{}, false
		}
		header, err := textproto.NewReader(br).ReadMIMEHeader()
		if err != nil && !errors.Is(err, io.EOF) {
			return Result{}, false
		}
		if status >= 200 {
			body, _ := io.ReadAll(io.LimitReader(br, MaxBodyBytes))
			return t.judge(status, func(name string) []string { return header.Values(name) }, body), true
		}
	}
}

// remoteFailure says why a remote probe found nothing to judge, from its
// exit status (-1: none) and error output.
func remoteFailure(t Target, status int, stderr string) Result {
	msg := lastLine(stderr)
	switch {
	case status == 0 && !t.HTTP():
		return Result{OK: true, Detail: "accepting connections"}
	case status == sshFailed:
		return Result{Detail: bound("ssh: " + strings.TrimPrefix(msg, "ssh: "))}
	case status == needsStatus && strings.HasPrefix(msg, "tmcp-probe: "):
		return Result{Detail: strings.TrimPrefix(msg, "tmcp-probe: ")}
	case status == timedOut || status == -1:
		return Result{Detail: "no answer in time"}
	}
	if t.HTTP() {
		if code, m, ok := curlError(firstLine(stderr)); ok {
			return Result{Detail: curlDetail(code, m)}
		}
		return Result{Detail: bound(msg)}
	}
	// bash: "bash: connect: Connection refused"
	if _, m, ok := strings.Cut(firstLine(stderr), "connect: "); ok {
		return Result{Detail: strings.ToLower(m)}
	}
	if msg == "" {
		return Result{Detail: "not accepting connections"}
	}
	return Result{Detail: bound(msg)}
}

// curl's exit statuses that a probe names in its own words.
const (
	curlRefused     = 7
	curlTimedOut    = 28
	curlTLS         = 35
	curlCertificate = 60
)

// curlError reads curl's error line: "curl: (60) SSL certificate
// problem: self-signed certificate".
func curlError(line string) (code int, msg string, ok bool) {
	rest, ok := strings.CutPrefix(line, "curl: (")
	num, msg, ok2 := strings.Cut(rest, ") ")
	code, err := strconv.Atoi(num)
	return code, msg, ok && ok2 && err == nil
}

// curlDetail says what curl's error means for a probe.
func curlDetail(code int, msg string) string {
	switch code {
	case curlRefused:
		if strings.Contains(msg, "Couldn't connect") {
			return "connection refused"
		}
	case curlTimedOut:
		return "no answer in time"
	case curlCertificate:
		return "TLS: " + bound(msg) + " (insecure: true accepts it)"
	case curlTLS:
		return "TLS: " + bound(msg)
	}
	return bound(msg)
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return first
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// limitedWriter keeps the first n bytes written to it and drops the rest.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.n -= k
		_, _ = l.w.Write(p[:k])
	}
	return len(p), nil
}
