{{/* The name of every namespaced object; fixed, as in manifests/, because the install is cluster-wide. */}}
{{- define "wcm.name" -}}wasmcloud-metacontroller{{- end }}

{{/* Labels of manifests/ (kustomization.yaml), plus Helm's own. */}}
{{- define "wcm.labels" -}}
app.kubernetes.io/name: {{ include "wcm.name" . }}
app.kubernetes.io/part-of: wasmcloud
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/* What the Deployment, PDB, NetworkPolicy and Service select: the same as manifests/. */}}
{{- define "wcm.selectorLabels" -}}
app.kubernetes.io/name: {{ include "wcm.name" . }}
{{- end }}

{{- define "wcm.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}:{{ $tag }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end -}}
{{- end }}

{{- define "wcm.natsMount" -}}/etc/wasmcloud-metacontroller/nats{{- end }}
{{- define "wcm.policyMount" -}}/etc/wasmcloud-metacontroller/policy{{- end }}

{{/* The Service's port: 443 once the hooks speak TLS (secure-hooks), 80 otherwise. */}}
{{- define "wcm.servicePort" -}}{{ ternary 443 80 .Values.hooks.secure.enabled }}{{- end }}

{{/* The lattice policy file, or nothing when there is none (only DEFAULT_LATTICE is allowed):
     latticePolicy.everyNamespace as a first rule for every namespace ("*"), then latticePolicy.rules. */}}
{{- define "wcm.latticePolicy" -}}
{{- $rules := list -}}
{{- with .Values.latticePolicy.everyNamespace -}}
{{- $rules = append $rules (dict "namespaces" (list "*") "lattices" .) -}}
{{- end -}}
{{- $rules = concat $rules (.Values.latticePolicy.rules | default list) -}}
{{- if $rules -}}
{{ dict "rules" $rules | toYaml }}
{{- end -}}
{{- end }}
