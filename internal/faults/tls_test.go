package faults

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/helper/acctest"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// tlsNode is the script's node that serves the management API over TLS.
const tlsNode = 5

// TestFaultManagementTLS points the provider at a management listener with
// TLS, on a node of its own, whose certificate comes from a CA the test
// makes and which requires a client certificate from that CA. cacert_file
// must verify the server; a wrong CA must fail with a diagnostic that says
// so; insecure = true must connect without verifying; and without a client
// certificate the listener must refuse the provider, so the steps that work
// show that clientcert_file and clientkey_file do.
func TestFaultManagementTLS(t *testing.T) {
	requireFaults(t)
	// The provider's environment fallbacks must not add settings the steps leave out.
	for _, env := range []string{"RABBITMQ_INSECURE", "RABBITMQ_CACERT", "RABBITMQ_CLIENTCERT", "RABBITMQ_CLIENTKEY", "RABBITMQ_PROXY"} {
		t.Setenv(env, "")
	}
	files := writeTLSFiles(t)
	tlsPort := describeNode(t, tlsNode).ManagementTLSPort
	n := startNodes(t, nodeConfig{Conf: fmt.Sprintf(`management.ssl.ip = 127.0.0.1
management.ssl.port = %d
management.ssl.cacertfile = %s
management.ssl.certfile = %s
management.ssl.keyfile = %s
management.ssl.verify = verify_peer
management.ssl.fail_if_no_peer_cert = true`, tlsPort, files.CA, files.ServerCert, files.ServerKey)}, tlsNode)[0]
	// The test's own eyes use the plain listener.
	client := brokerClient(t, n.ManagementURL)
	name := "faults-tls-" + strings.ToLower(acctest.RandString(6))
	endpoint := fmt.Sprintf("https://127.0.0.1:%d", tlsPort)
	set := fmt.Sprintf(`
resource "rabbitmq_delay_queue_set" "test" {
  name   = %q
  levels = 2
}
`, name)
	provider := func(settings ...string) string {
		return fmt.Sprintf("provider \"rabbitmq\" {\n  endpoint = %q\n  username = \"guest\"\n  password = \"guest\"\n  timeout  = \"10s\"\n  %s\n}\n",
			endpoint, strings.Join(settings, "\n  "))
	}
	caFile := fmt.Sprintf("cacert_file = %q", files.CA)
	wrongCAFile := fmt.Sprintf("cacert_file = %q", files.WrongCA)
	clientCert := fmt.Sprintf("clientcert_file = %q\n  clientkey_file = %q", files.ClientCert, files.ClientKey)

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: providerFactories,
		CheckDestroy:             func(*terraform.State) error { return checkSetGone(client, name) },
		Steps: []resource.TestStep{
			{
				// The right CA and a client certificate: verified both ways.
				Config: provider(caFile, clientCert) + set,
				Check: func(*terraform.State) error {
					actual, err := client.ReadSet(t.Context(), "/", name)
					if err == nil && len(actual.Queues) != 3 {
						err = fmt.Errorf("the broker holds %d queues of %s, want 3", len(actual.Queues), name)
					}
					return err
				},
			},
			{
				// A CA that did not sign the server's certificate.
				Config:      provider(wrongCAFile, clientCert) + set,
				ExpectError: regexp.MustCompile(`(?s)Cannot Reach RabbitMQ.*127\.0\.0\.1:` + fmt.Sprint(tlsPort) + `.*certificate\s+signed\s+by\s+unknown\s+authority`),
			},
			{
				// The right CA, but no client certificate for a listener that requires one.
				Config:      provider(caFile) + set,
				ExpectError: regexp.MustCompile(`(?s)Cannot Reach RabbitMQ.*127\.0\.0\.1:` + fmt.Sprint(tlsPort) + `.*certificate\s+required`),
			},
			{
				// insecure = true connects without knowing the CA: the refresh reads the set.
				Config: provider("insecure = true", clientCert) + set,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
	t.Logf("the provider verified %s with cacert_file, refused a wrong CA, connected with insecure = true, and needed its client certificate", endpoint)
}

// tlsFiles are the PEM files of the TLS test.
type tlsFiles struct {
	CA, WrongCA           string
	ServerCert, ServerKey string
	ClientCert, ClientKey string
}

// writeTLSFiles makes a CA, a server certificate for 127.0.0.1 and
// localhost and a client certificate, both signed by it, and a second CA
// that signed neither. The node runs as the rabbitmq user, so the files and
// their directory must be readable by others; they are throwaway.
func writeTLSFiles(t *testing.T) tlsFiles {
	t.Helper()
	dir := t.TempDir()
	// t.TempDir makes a private directory for the test and one inside it.
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name string, block *pem.Block) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	ca, caKey := newCertificate(t, &x509.Certificate{Subject: pkix.Name{CommonName: "faults test CA"}, IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}, nil, nil)
	wrongCA, _ := newCertificate(t, &x509.Certificate{Subject: pkix.Name{CommonName: "faults test wrong CA"}, IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}, nil, nil)
	server, serverKey := newCertificate(t, &x509.Certificate{Subject: pkix.Name{CommonName: "localhost"},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, ca, caKey)
	client, clientKey := newCertificate(t, &x509.Certificate{Subject: pkix.Name{CommonName: "terraform"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, ca, caKey)
	return tlsFiles{
		CA:         write("ca.pem", &pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}),
		WrongCA:    write("wrong-ca.pem", &pem.Block{Type: "CERTIFICATE", Bytes: wrongCA.Raw}),
		ServerCert: write("server.pem", &pem.Block{Type: "CERTIFICATE", Bytes: server.Raw}),
		ServerKey:  write("server.key", privateKeyBlock(t, serverKey)),
		ClientCert: write("client.pem", &pem.Block{Type: "CERTIFICATE", Bytes: client.Raw}),
		ClientKey:  write("client.key", privateKeyBlock(t, clientKey)),
	}
}

// newCertificate completes template with a fresh P-256 key, a serial
// number and a validity of a day, and signs it with parent's key, or with
// its own when parent is nil.
func newCertificate(t *testing.T, template, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	template.SerialNumber = serial
	template.NotBefore = time.Now().Add(-time.Hour)
	template.NotAfter = time.Now().Add(24 * time.Hour)
	if parent == nil {
		parent, parentKey = template, key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	certificate, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return certificate, key
}

func privateKeyBlock(t *testing.T, key *ecdsa.PrivateKey) *pem.Block {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return &pem.Block{Type: "PRIVATE KEY", Bytes: der}
}
