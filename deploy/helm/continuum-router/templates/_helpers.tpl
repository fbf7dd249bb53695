{{/* The name of every namespaced object of a release: the release name, with the chart name unless it has it. */}}
{{- define "continuum-router.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "continuum-router.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "continuum-router.labels" -}}
{{ include "continuum-router.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The config file: values.config with server.bind_address defaulted to every interface on containerPort. */}}
{{- define "continuum-router.config" -}}
{{- $config := deepCopy (default dict .Values.config) -}}
{{- $server := default dict (get $config "server") -}}
{{- if not (hasKey $server "bind_address") -}}
{{- $_ := set $server "bind_address" (printf "0.0.0.0:%d" (int .Values.containerPort)) -}}
{{- end -}}
{{- $_ := set $config "server" $server -}}
{{- toYaml $config -}}
{{- end -}}

{{- define "continuum-router.configMapName" -}}
{{- default (printf "%s-config" (include "continuum-router.fullname" .)) .Values.existingConfigMap -}}
{{- end -}}

{{/* The metrics path the config serves (metrics.endpoint), for the ServiceMonitor. */}}
{{- define "continuum-router.metricsPath" -}}
{{- $metrics := default dict (get (default dict .Values.config) "metrics") -}}
{{- default "/metrics" (get $metrics "endpoint") -}}
{{- end -}}
