package otelrobots_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/crawlkit/robots"
	"github.com/crawlkit/robots/otelrobots"
)

// Example serves a transport's metrics to Prometheus: the OpenTelemetry
// Prometheus exporter is the MeterProvider's reader, and its registry is
// served on /metrics; a resource gives the crawler its service name.
// After a small crawl, the scrape shows the decisions by result and
// reason, and the service name on target_info.
func Example() {
	// A site that disallows /private and opts out of AI training on /ai/.
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nDisallow: /private\nContent-Usage: /ai/ train-ai=n\n")
			return
		}
		io.WriteString(w, "page")
	}))
	defer site.Close()

	registry := prometheus.NewRegistry()
	exporter, err := otelprom.New(otelprom.WithRegisterer(registry), otelprom.WithoutScopeInfo())
	if err != nil {
		log.Fatal(err)
	}
	// The service name labels every series (Prometheus's job, and the
	// target_info series); without it, it is unknown_service.
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exporter),
		sdkmetric.WithResource(resource.NewSchemaless(attribute.String("service.name", "crawl"))))
	defer provider.Shutdown(context.Background())

	tr := robots.NewTransport(nil, robots.Options{UserAgent: "ExampleBot/1.0", MinDelay: -1, Purposes: []string{"train-ai"}})
	if _, err := otelrobots.Register(tr, provider); err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: tr}
	for _, path := range []string{"/", "/a", "/private", "/ai/page"} {
		if resp, err := client.Get(site.URL + path); err == nil {
			resp.Body.Close()
		}
	}

	metrics := httptest.NewServer(promhttp.HandlerFor(registry, promhttp.HandlerOpts{}))
	defer metrics.Close()
	resp, err := http.Get(metrics.URL)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "robots_decisions_total{") || strings.HasPrefix(lines.Text(), "target_info{") {
			fmt.Println(lines.Text())
		}
	}
	// Output:
	// robots_decisions_total{robots_decision="allowed"} 2
	// robots_decisions_total{robots_decision="refused",robots_reason="preference"} 1
	// robots_decisions_total{robots_decision="refused",robots_reason="rule"} 1
	// robots_decisions_total{robots_decision="refused",robots_reason="unreachable"} 0
	// target_info{service_name="crawl"} 1
}
