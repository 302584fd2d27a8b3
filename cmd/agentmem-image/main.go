// Command agentmem-image builds agentmem's container image without Docker: one image for every
// function, from an empty (scratch) base, holding the static agentmem binary, the CA
// certificates and an unprivileged user. It runs
//
//   - on Lambda as a container image: the command `lambda <name>` (or `lambda` with
//     AGENTMEM_FUNCTION=<name>) serves that function through the Lambda Runtime API;
//   - anywhere else as a plain HTTP server (the default command, `serve`): every function at
//     POST /v1/<name>, GET /healthz, on :$PORT (8080 in the image), draining on SIGTERM.
//
// It writes an OCI image layout (build/image), a tarball that `docker load`, `podman load` and
// `crane push` take (build/agentmem-image.tar), and an SPDX SBOM of the binary's modules
// (build/agentmem-image.spdx.json); --push REF also sends it to a registry, with the
// credentials of ~/.docker/config.json (`crane auth login`, `aws ecr get-login-password |
// crane auth login --username AWS --password-stdin <registry>`).
//
//	go run ./cmd/agentmem-image [--arch arm64|amd64] [--out build] [--tag agentmem:latest] [--push REF]
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"debug/buildinfo"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Where things are inside the image.
const (
	binaryPath = "agentmem"
	caPath     = "etc/ssl/certs/ca-certificates.crt"
	// nonroot is the user the image runs as (distroless's nonroot ids).
	nonroot = "65532"
	// imagePort is where `serve` listens in the image unless ADDR or PORT say otherwise.
	imagePort = "8080"
)

// hostCABundle is where Debian (and Ubuntu, Alpine) keep the CA bundle the image copies.
var hostCABundle = "/etc/ssl/certs/ca-certificates.crt"

// Params says what to build.
type Params struct {
	// Arch is the GOARCH: arm64 (Lambda's cheaper architecture, the default) or amd64.
	Arch string
	// OutDir receives image/ (OCI layout), agentmem-image.tar and agentmem-image.spdx.json.
	OutDir string
	// Tag names the image inside the tarball and the layout.
	Tag string
	// Push, when set, is a registry reference to push the image to.
	Push string
	// Created is the image's creation time; zero means SOURCE_DATE_EPOCH or the Unix epoch,
	// so that the same sources give the same image.
	Created time.Time
}

// Result describes a built image.
type Result struct {
	Digest       string `json:"digest"`
	Arch         string `json:"arch"`
	Layout       string `json:"layout"`
	Tarball      string `json:"tarball"`
	SBOM         string `json:"sbom"`
	BinaryBytes  int64  `json:"binary_bytes"`
	LayerBytes   int64  `json:"compressed_bytes"`
	ImageBytes   int64  `json:"uncompressed_bytes"`
	PushedDigest string `json:"pushed,omitempty"`
}

func main() {
	var p Params
	flag.StringVar(&p.Arch, "arch", "arm64", "GOARCH of the image: arm64 or amd64")
	flag.StringVar(&p.OutDir, "out", "build", "folder for image/, agentmem-image.tar and agentmem-image.spdx.json")
	flag.StringVar(&p.Tag, "tag", "agentmem:latest", "the image's name in the tarball")
	flag.StringVar(&p.Push, "push", "", "also push to this registry reference (e.g. <account>.dkr.ecr.<region>.amazonaws.com/agentmem:v1)")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintf(os.Stderr, "agentmem-image: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	res, err := Build(context.Background(), p)
	if err != nil {
		fmt.Fprintf(os.Stderr, "agentmem-image: %v\n", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "agentmem-image: %s (linux/%s) %s: binary %.1f MiB, image %.1f MiB, %.1f MiB compressed\n",
		p.Tag, res.Arch, res.Digest, mib(res.BinaryBytes), mib(res.ImageBytes), mib(res.LayerBytes))
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.Encode(res) //nolint:errcheck
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// Build compiles agentmem for linux/p.Arch and writes the image.
func Build(ctx context.Context, p Params) (Result, error) {
	if p.Arch != "arm64" && p.Arch != "amd64" {
		return Result{}, fmt.Errorf("--arch must be arm64 or amd64, not %q", p.Arch)
	}
	if p.Tag == "" {
		p.Tag = "agentmem:latest"
	}
	tag, err := name.NewTag(p.Tag)
	if err != nil {
		return Result{}, fmt.Errorf("--tag: %w", err)
	}
	if p.Created.IsZero() {
		p.Created = sourceDate()
	}
	if err := os.MkdirAll(p.OutDir, 0o755); err != nil {
		return Result{}, err
	}
	work, err := os.MkdirTemp("", "agentmem-image-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(work)

	bin := filepath.Join(work, "agentmem")
	if err := compile(ctx, p.Arch, bin); err != nil {
		return Result{}, err
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		return Result{}, err
	}
	ca, err := os.ReadFile(hostCABundle)
	if err != nil {
		return Result{}, fmt.Errorf("CA certificates (Debian: apt-get install ca-certificates): %w", err)
	}
	layerTar, err := rootFS(binary, ca, p.Created)
	if err != nil {
		return Result{}, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return Result{}, err
	}
	img, err := mutate.Append(mutate.MediaType(empty.Image, types.OCIManifestSchema1), mutate.Addendum{
		Layer:     layer,
		History:   v1.History{CreatedBy: "agentmem-image: /agentmem, CA certificates, user nonroot", Created: v1.Time{Time: p.Created}},
		MediaType: types.OCILayer,
	})
	if err != nil {
		return Result{}, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return Result{}, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS = p.Arch, "linux"
	cf.Created = v1.Time{Time: p.Created}
	cf.Config = v1.Config{
		Entrypoint: []string{"/" + binaryPath},
		Cmd:        []string{"serve"},
		Env: []string{
			"PATH=/",
			"PORT=" + imagePort,
			"SSL_CERT_FILE=/" + caPath,
		},
		User:         nonroot + ":" + nonroot,
		WorkingDir:   "/",
		ExposedPorts: map[string]struct{}{imagePort + "/tcp": {}},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "agentmem",
			"org.opencontainers.image.description": "agentmem functions: `serve` (HTTP, every function) or `lambda <name>` (Lambda Runtime API)",
			"org.opencontainers.image.base.name":   "scratch",
		},
	}
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return Result{}, err
	}

	res := Result{Arch: p.Arch, BinaryBytes: int64(len(binary)), ImageBytes: int64(len(layerTar))}
	digest, err := img.Digest()
	if err != nil {
		return Result{}, err
	}
	res.Digest = digest.String()
	if res.LayerBytes, err = layer.Size(); err != nil {
		return Result{}, err
	}

	res.Layout = filepath.Join(p.OutDir, "image")
	if err := os.RemoveAll(res.Layout); err != nil {
		return Result{}, err
	}
	lp, err := layout.Write(res.Layout, empty.Index)
	if err != nil {
		return Result{}, err
	}
	if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": tag.String(),
	})); err != nil {
		return Result{}, err
	}
	res.Tarball = filepath.Join(p.OutDir, "agentmem-image.tar")
	if err := tarball.WriteToFile(res.Tarball, tag, img); err != nil {
		return Result{}, err
	}
	res.SBOM = filepath.Join(p.OutDir, "agentmem-image.spdx.json")
	if err := writeSBOM(res.SBOM, bin, digest.String(), p); err != nil {
		return Result{}, err
	}
	if p.Push != "" {
		ref, err := name.ParseReference(p.Push)
		if err != nil {
			return Result{}, fmt.Errorf("--push: %w", err)
		}
		if err := remote.Write(ref, img, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
			return Result{}, fmt.Errorf("push %s: %w", ref, err)
		}
		res.PushedDigest = ref.Context().Digest(digest.String()).String()
	}
	return res, nil
}

// sourceDate is SOURCE_DATE_EPOCH when set (reproducible builds), else the Unix epoch.
func sourceDate() time.Time {
	var sec int64
	if v := os.Getenv("SOURCE_DATE_EPOCH"); v != "" {
		fmt.Sscan(v, &sec) //nolint:errcheck
	}
	return time.Unix(sec, 0).UTC()
}

// buildTags are the build tags of the Lambda zip builds (scripts/build-function.sh's TAGS):
// grpcnotrace keeps golang.org/x/net/trace, and with it every exported method of every type in
// an interface, out of the binary.
const buildTags = "lambda.norpc,grpcnotrace"

// compile builds the static agentmem binary with the flags of the Lambda zip builds.
func compile(ctx context.Context, arch, out string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-tags", buildTags, "-trimpath", "-ldflags=-s -w",
		"-o", out, "./cmd/agentmem")
	cmd.Dir = moduleRoot()
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %w", err)
	}
	return nil
}

// moduleRoot finds the folder of go.mod from the working directory (go run and go test run
// from inside the module).
func moduleRoot() string {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err == nil {
		if mod := strings.TrimSpace(string(out)); mod != "" && mod != os.DevNull {
			return filepath.Dir(mod)
		}
	}
	return "."
}

// rootFS is the image's one layer: the binary, the CA bundle, a passwd and group naming the
// nonroot user, and a world-writable /tmp.
func rootFS(binary, ca []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dir := func(name string, mode int64) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name + "/", Mode: mode, ModTime: mtime, Format: tar.FormatPAX})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: mtime, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	steps := []error{
		file(binaryPath, 0o755, binary),
		dir("etc", 0o755),
		file("etc/passwd", 0o644, []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:"+nonroot+":"+nonroot+":nonroot:/home/nonroot:/sbin/nologin\n")),
		file("etc/group", 0o644, []byte("root:x:0:\nnonroot:x:"+nonroot+":\n")),
		dir("etc/ssl", 0o755),
		dir("etc/ssl/certs", 0o755),
		file(caPath, 0o644, ca),
		dir("home", 0o755),
		dir("tmp", 0o1777),
	}
	if err := errors.Join(steps...); err != nil {
		return nil, err
	}
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: "home/nonroot/", Mode: 0o700, Uid: 65532, Gid: 65532, ModTime: mtime, Format: tar.FormatPAX}); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeSBOM writes an SPDX 2.3 document listing what the image holds: the agentmem binary's
// Go modules (from its build information) and the CA bundle.
func writeSBOM(path, bin, digest string, p Params) error {
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		return fmt.Errorf("read the binary's build information: %w", err)
	}
	type pkg struct {
		SPDXID           string `json:"SPDXID"`
		Name             string `json:"name"`
		VersionInfo      string `json:"versionInfo,omitempty"`
		DownloadLocation string `json:"downloadLocation"`
		ExternalRefs     []any  `json:"externalRefs,omitempty"`
		Comment          string `json:"comment,omitempty"`
	}
	purl := func(path, version string) []any {
		return []any{map[string]string{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
			"referenceLocator": "pkg:golang/" + path + "@" + version}}
	}
	pkgs := []pkg{{
		SPDXID: "SPDXRef-Image", Name: p.Tag, VersionInfo: digest, DownloadLocation: "NOASSERTION",
		Comment: "base: scratch (empty); linux/" + p.Arch + "; built by cmd/agentmem-image",
	}, {
		SPDXID: "SPDXRef-Go", Name: "go", VersionInfo: info.GoVersion, DownloadLocation: "NOASSERTION",
		Comment: "the Go toolchain and standard library compiled into /agentmem",
	}, {
		SPDXID: "SPDXRef-Main", Name: info.Main.Path, VersionInfo: info.Main.Version, DownloadLocation: "NOASSERTION",
		Comment: "/agentmem",
	}, {
		SPDXID: "SPDXRef-CA", Name: "ca-certificates", VersionInfo: caVersion(), DownloadLocation: "NOASSERTION",
		Comment: "/" + caPath + ", from the build machine's Debian package",
	}}
	for i, d := range info.Deps {
		m := d
		if d.Replace != nil {
			m = d.Replace
		}
		pkgs = append(pkgs, pkg{SPDXID: fmt.Sprintf("SPDXRef-Dep-%d", i), Name: m.Path, VersionInfo: m.Version,
			DownloadLocation: "NOASSERTION", ExternalRefs: purl(m.Path, m.Version)})
	}
	rels := []map[string]string{{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES", "relatedSpdxElement": "SPDXRef-Image"}}
	for _, pk := range pkgs[1:] {
		rels = append(rels, map[string]string{"spdxElementId": "SPDXRef-Image", "relationshipType": "CONTAINS", "relatedSpdxElement": pk.SPDXID})
	}
	sum := sha256.Sum256([]byte(digest))
	doc := map[string]any{
		"spdxVersion":       "SPDX-2.3",
		"dataLicense":       "CC0-1.0",
		"SPDXID":            "SPDXRef-DOCUMENT",
		"name":              "agentmem-image",
		"documentNamespace": "https://github.com/agentmem/agentmem/sbom/" + hex.EncodeToString(sum[:8]),
		"creationInfo": map[string]any{
			"created":  p.Created.UTC().Format(time.RFC3339),
			"creators": []string{"Tool: agentmem-image", "Tool: " + runtime.Version()},
		},
		"packages":      pkgs,
		"relationships": rels,
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(out, '\n'), 0o644)
}

// caVersion is the build machine's ca-certificates package version, when dpkg knows it.
func caVersion() string {
	out, err := exec.Command("dpkg-query", "-W", "-f=${Version}", "ca-certificates").Output()
	if err != nil || len(out) == 0 {
		return "NOASSERTION"
	}
	return string(out)
}
