{{- define "ankra-cloud-ccm.labels" -}}
app.kubernetes.io/name: ankra-cloud-ccm
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: cloud-controller-manager
helm.sh/chart: ankra-cloud-ccm-{{ .Chart.Version }}
{{- end }}

{{- define "ankra-cloud-ccm.selectorLabels" -}}
app.kubernetes.io/name: ankra-cloud-ccm
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- /* The leader-election Lease's name: the Deployment's --leader-elect-resource-name and the Role's resourceNames. */}}
{{- define "ankra-cloud-ccm.leaseName" -}}ankra-cloud-ccm{{- end }}

{{- define "ankra-cloud-ccm.secretName" -}}
{{- if .Values.api.existingSecret -}}{{ .Values.api.existingSecret }}{{- else -}}ankra-cloud-ccm{{- end -}}
{{- end }}

{{- define "ankra-cloud-ccm.hasCABundle" -}}
{{- if or .Values.api.caBundle .Values.api.existingSecretHasCABundle -}}true{{- end -}}
{{- end }}

{{- /*
The container image. A Go chart 0.1.x install with a pinned image.tag keeps that tag through `helm upgrade
--reuse-values`: the Go controller's image would then run with this chart's arguments and crash-loop after the old
pod is gone. Refuse to render that.
*/}}
{{- define "ankra-cloud-ccm.image" -}}
{{- $tag := toString (.Values.image.tag | default .Chart.AppVersion) -}}
{{- if regexMatch "^v?0\\.1(\\.|$|-)" $tag -}}
{{- fail (printf "image.tag %s is an image of the Go controller (0.1.x), which cannot run this chart's arguments and would crash-loop: upgrade with --set image.tag= to use this chart's image (%s), or set a 0.2.x or later tag" $tag .Chart.AppVersion) -}}
{{- end -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end }}
