package deploy

import (
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/hnsproxy/hnsproxy/cmd/hnsproxy/app/options"
	"github.com/hnsproxy/hnsproxy/internal/doctest"
)

// podMonitor is the part of prometheus-operator's PodMonitor
// (monitoring.coreos.com/v1) deploy/monitoring sets; decoded strictly, a
// field it does not know fails the test rather than being ignored.
type podMonitor struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		JobLabel            string               `json:"jobLabel"`
		Selector            metav1.LabelSelector `json:"selector"`
		PodMetricsEndpoints []struct {
			Port string `json:"port"`
			Path string `json:"path"`
		} `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

// alertJob finds the job the alerts select.
var alertJob = regexp.MustCompile(`job="([^"]*)"`)

// TestPodMonitorScrapesTheJobTheAlertsSelect: the alerts select one job,
// "hnsproxy". A PodMonitor names its job <namespace>/<name> unless
// jobLabel names a pod label to take it from, so deploy/monitoring's
// PodMonitor must take the alerts' job from a label deploy/'s pods carry,
// select those pods in their namespace, and scrape the container port the
// configuration binds the metrics server to on every address.
func TestPodMonitorScrapesTheJobTheAlertsSelect(t *testing.T) {
	raw, err := os.ReadFile("monitoring/hnsproxy-podmonitor.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pm podMonitor
	if err := yaml.UnmarshalStrict(raw, &pm); err != nil {
		t.Fatalf("hnsproxy-podmonitor.yaml: %v", err)
	}
	if pm.APIVersion != "monitoring.coreos.com/v1" || pm.Kind != "PodMonitor" {
		t.Fatalf("hnsproxy-podmonitor.yaml is a %s %s, want a monitoring.coreos.com/v1 PodMonitor", pm.APIVersion, pm.Kind)
	}

	rules, err := os.ReadFile("monitoring/hnsproxy-alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	jobs := map[string]bool{}
	for _, m := range alertJob.FindAllStringSubmatch(string(rules), -1) {
		jobs[m[1]] = true
	}
	if len(jobs) != 1 {
		t.Fatalf("the alerts select jobs %v, want one", jobs)
	}

	objs, _ := decodeAll(t)
	ds := objs["DaemonSet"].(*appsv1.DaemonSet)
	podLabels := ds.Spec.Template.Labels
	if pm.Metadata.Namespace != ds.Namespace {
		t.Errorf("the PodMonitor is in namespace %q, hnsproxy's pods in %q: it selects pods of its own namespace", pm.Metadata.Namespace, ds.Namespace)
	}
	selector, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
	if err != nil || selector.Empty() || !selector.Matches(labels.Set(podLabels)) {
		t.Errorf("the PodMonitor's selector %v (%v) does not select hnsproxy's pods, labelled %v", pm.Spec.Selector, err, podLabels)
	}
	job := podLabels[pm.Spec.JobLabel]
	if pm.Spec.JobLabel == "" || !jobs[job] {
		t.Errorf("the PodMonitor's jobLabel %q gives job %q (pods labelled %v), the alerts select %v", pm.Spec.JobLabel, job, podLabels, jobs)
	}

	cm := objs["ConfigMap"].(*v1.ConfigMap)
	kp, _, err := options.DecodeConfig([]byte(cm.Data["config.conf"]))
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(kp.MetricsBindAddress)
	if err != nil || !net.ParseIP(host).IsUnspecified() {
		t.Errorf("config.conf binds metrics to %q (%v): Prometheus scrapes the node's address, so every address", kp.MetricsBindAddress, err)
	}
	if len(pm.Spec.PodMetricsEndpoints) != 1 {
		t.Fatalf("the PodMonitor has %d endpoints, want one", len(pm.Spec.PodMetricsEndpoints))
	}
	ep := pm.Spec.PodMetricsEndpoints[0]
	var scraped *v1.ContainerPort
	for i, p := range ds.Spec.Template.Spec.Containers[0].Ports {
		if p.Name == ep.Port {
			scraped = &ds.Spec.Template.Spec.Containers[0].Ports[i]
		}
	}
	if scraped == nil || strconv.Itoa(int(scraped.ContainerPort)) != port || ep.Path != "/metrics" {
		t.Errorf("the PodMonitor scrapes port %q path %q; want the container port the metrics server listens on (%s), path /metrics", ep.Port, ep.Path, kp.MetricsBindAddress)
	}
}

// TestPodMonitorUnderTheOverlay: under deploy/replace-kube-proxy hnsproxy
// reads kubeadm's kube-system/kube-proxy ConfigMap, whose
// metricsBindAddress is empty: 127.0.0.1:10249, kube-proxy's default, which
// the PodMonitor (scraping the pod's, so the node's, address) cannot reach,
// and HNSProxyInstanceUnreachable and HNSProxyDown fire on a healthy
// cluster. --metrics-bind-address in the overlay's arguments would be
// ignored beside --config, as kube-proxy ignores it. So the monitoring
// guide says to set metricsBindAddress in that ConfigMap, and with it set
// as the guide says, the overlay's hnsproxy serves the port the PodMonitor
// scrapes on every address.
func TestPodMonitorUnderTheOverlay(t *testing.T) {
	cm := kubeadmConfigMap(t)
	cfg, _, err := completeOverlay(t, cm)
	if err != nil {
		t.Fatal(err)
	}
	host, _, err := net.SplitHostPort(cfg.MetricsBindAddress)
	if err != nil || !net.ParseIP(host).IsLoopback() {
		t.Fatalf("kubeadm's ConfigMap now gives metrics on %q (%v): revisit the monitoring guide's note", cfg.MetricsBindAddress, err)
	}
	const fix = "metricsBindAddress: 0.0.0.0:10249"
	section := doctest.Section(t, "docs/operators.md", "## Monitoring: dashboard and alerts")
	if !strings.Contains(section, "replace-kube-proxy") || !strings.Contains(section, fix) {
		t.Errorf("the monitoring guide does not tell an operator of deploy/replace-kube-proxy to set %q in kubeadm's ConfigMap", fix)
	}
	conf := cm.Data["config.conf"]
	if !strings.Contains(conf, `metricsBindAddress: ""`) {
		t.Fatal(`kubeadm's config.conf has no metricsBindAddress: "" to edit`)
	}
	cm.Data["config.conf"] = strings.Replace(conf, `metricsBindAddress: ""`, fix, 1)
	if cfg, _, err = completeOverlay(t, cm); err != nil || cfg.MetricsBindAddress != "0.0.0.0:10249" {
		t.Errorf("with %s: metrics on %q (%v), want 0.0.0.0:10249", fix, cfg.MetricsBindAddress, err)
	}
}
