// Package redistest gives tests a real Redis: the shared server `make test` starts
// (AGENTMEM_TEST_REDIS_URL, scripts/redis.sh), and private redis-server processes a test can
// pause, stop and start again, or serve over TLS with a throwaway certificate.
package redistest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// EnvURL names the shared test server's URL.
const EnvURL = "AGENTMEM_TEST_REDIS_URL"

// URL is the shared test server's URL. A missing one fails the test: `make test` starts Redis
// and sets it.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		t.Fatalf("%s is not set: run the tests with `make test`, which starts Redis (scripts/redis.sh)", EnvURL)
	}
	return u
}

// Server is a private redis-server, in memory only, on a loopback port of its own.
type Server struct {
	t    testing.TB
	dir  string
	args []string
	cmd  *exec.Cmd
	// Port is the plain port; TLSPort the TLS one (0 without TLS).
	Port, TLSPort int
	// CA verifies the TLS port's certificate (nil without TLS).
	CA *x509.CertPool
}

// Options configure a private server.
type Options struct {
	// TLS adds a TLS port, with a certificate for 127.0.0.1 and localhost signed by a
	// throwaway certificate authority (Server.CA).
	TLS bool
	// Password, when set, is required (requirepass).
	Password string
}

// Start starts a private server; it is stopped when the test ends. It fails the test when
// redis-server is missing.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server is not on PATH: run the tests with `make test` (scripts/redis.sh installs it)")
	}
	s := &Server{t: t, dir: t.TempDir(), Port: freePort(t)}
	s.args = []string{"--bind", "127.0.0.1", "--port", strconv.Itoa(s.Port), "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--protected-mode", "yes"}
	if o.Password != "" {
		s.args = append(s.args, "--requirepass", o.Password)
	}
	if o.TLS {
		s.TLSPort = freePort(t)
		s.CA = writeCertificates(t, s.dir)
		s.args = append(s.args, "--tls-port", strconv.Itoa(s.TLSPort),
			"--tls-cert-file", filepath.Join(s.dir, "server.crt"), "--tls-key-file", filepath.Join(s.dir, "server.key"),
			"--tls-ca-cert-file", filepath.Join(s.dir, "ca.crt"), "--tls-auth-clients", "no")
	}
	s.args = append([]string{bin}, s.args...)
	s.start()
	t.Cleanup(s.Stop)
	return s
}

// URL is the plain port's redis:// URL.
func (s *Server) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d", s.Port) }

// TLSURL is the TLS port's rediss:// URL.
func (s *Server) TLSURL() string { return fmt.Sprintf("rediss://localhost:%d", s.TLSPort) }

func (s *Server) start() {
	s.t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(s.args[0], s.args[1:]...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("start redis-server: %v", err)
	}
	s.cmd = cmd
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", s.Port), time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server does not answer on port %d: %s", s.Port, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Pause stops the server's process (SIGSTOP): connections stay open and nothing answers, as
// a server that hangs. Resume continues it, its data intact.
func (s *Server) Pause() {
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		s.t.Fatalf("pause redis-server: %v", err)
	}
}

// Resume continues a paused server.
func (s *Server) Resume() {
	if err := s.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		s.t.Fatalf("resume redis-server: %v", err)
	}
}

// Stop ends the server (its data goes with it); it is safe to call again.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT)
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart starts a stopped server again on the same ports, empty.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// freePort finds a loopback port nothing listens on.
func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// writeCertificates writes ca.crt, server.crt and server.key into dir: a throwaway authority
// and a server certificate for 127.0.0.1 and localhost it signed.
func writeCertificates(t testing.TB, dir string) *x509.CertPool {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "agentmem test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, block := range map[string]*pem.Block{
		"ca.crt":     {Type: "CERTIFICATE", Bytes: caDER},
		"server.crt": {Type: "CERTIFICATE", Bytes: der},
		"server.key": {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return pool
}

// TLSConfig is a client configuration trusting s's certificate authority.
func (s *Server) TLSConfig() *tls.Config {
	return &tls.Config{RootCAs: s.CA, MinVersion: tls.VersionTLS12}
}
