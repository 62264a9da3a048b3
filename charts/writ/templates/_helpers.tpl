{{/* Chart name, truncated to 63 characters. */}}
{{- define "writ.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Fully qualified app name; the release name alone when it already contains the chart name. */}}
{{- define "writ.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object. */}}
{{- define "writ.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "writ.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: writ
{{- end -}}

{{/* Selector labels of one component: call with (dict "ctx" $ "component" "data-plane"). */}}
{{- define "writ.selectorLabels" -}}
app.kubernetes.io/name: {{ include "writ.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Labels of one component's objects. */}}
{{- define "writ.componentLabels" -}}
{{ include "writ.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* The image reference: repository@digest, else repository:tag (tag defaults to appVersion). */}}
{{- define "writ.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "writ.dataPlane.fullname" -}}{{ include "writ.fullname" . }}-data-plane{{- end -}}
{{- define "writ.controller.fullname" -}}{{ include "writ.fullname" . }}-controller{{- end -}}

{{- define "writ.dataPlane.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "writ.dataPlane.fullname" .) .Values.serviceAccount.dataPlaneName -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.dataPlaneName -}}
{{- end -}}
{{- end -}}

{{- define "writ.controller.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "writ.controller.fullname" .) .Values.serviceAccount.controllerName -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.controllerName -}}
{{- end -}}
{{- end -}}

{{- define "writ.leaseName" -}}
{{- default (include "writ.controller.fullname" .) .Values.controller.leaderElection.leaseName -}}
{{- end -}}

{{/* Name of the Secret the pods read: the existing one, or the chart's. */}}
{{- define "writ.secretName" -}}
{{- if .Values.secret.existingSecret -}}
{{- .Values.secret.existingSecret -}}
{{- else -}}
{{- include "writ.fullname" . -}}
{{- end -}}
{{- end -}}

{{/* Refuses an existing Secret combined with inline secret values, and an install without a database (a URL, an existing Secret, or the chart's CloudNativePG Cluster). */}}
{{- define "writ.validateSecret" -}}
{{- $s := .Values.secret -}}
{{- if and (not $s.existingSecret) (not $s.databaseUrl) (not .Values.postgresCluster.enabled) -}}
{{- fail "secret.databaseUrl is required (postgres://user:password@host:5432/db), or secret.existingSecret naming a Secret with DATABASE_URL, or postgresCluster.enabled: without Postgres the controller cannot start and the data plane answers 503" -}}
{{- end -}}
{{- if and $s.existingSecret (or $s.logSigningSeed $s.appendToken $s.adminToken $s.databaseUrl) -}}
{{- fail "secret.existingSecret is set: leave secret.logSigningSeed, appendToken, adminToken and databaseUrl empty (put them in that Secret)" -}}
{{- end -}}
{{- end -}}

{{/* Environment shared by both components: where the pod runs and what it watches. */}}
{{- define "writ.commonEnv" -}}
- name: HOST
  value: "0.0.0.0"
- name: POD_NAME
  valueFrom: { fieldRef: { fieldPath: metadata.name } }
- name: POD_NAMESPACE
  valueFrom: { fieldRef: { fieldPath: metadata.namespace } }
- name: WRIT_WATCH_NAMESPACES
  value: {{ join "," .Values.watchNamespaces | quote }}
{{- include "writ.postgresCluster.env" . }}
{{- include "writ.citus.env" . }}
{{- end -}}

{{/* Settings from the ConfigMap and the Secret. */}}
{{- define "writ.envFrom" -}}
- configMapRef:
    name: {{ include "writ.fullname" . }}
- secretRef:
    name: {{ include "writ.secretName" . }}
{{- end -}}

{{/* Pod annotations that roll the pods when the chart's settings change. */}}
{{- define "writ.checksums" -}}
checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- if not .Values.secret.existingSecret }}
checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- end -}}

{{/* Refuses leader election timings client-go would refuse: lease > renew deadline > 1.2 retry periods. */}}
{{- define "writ.validateLeaderElection" -}}
{{- $le := .Values.controller.leaderElection -}}
{{- if not (and (gt (int $le.leaseDurationSeconds) (int $le.renewDeadlineSeconds)) (gt (mulf $le.renewDeadlineSeconds 1.0) (mulf $le.retryPeriodSeconds 1.2))) -}}
{{- fail (printf "controller.leaderElection: leaseDurationSeconds (%v) must be longer than renewDeadlineSeconds (%v), which must be longer than 1.2 x retryPeriodSeconds (%v)" $le.leaseDurationSeconds $le.renewDeadlineSeconds $le.retryPeriodSeconds) -}}
{{- end -}}
{{- end -}}

{{/* policy/v1 from Kubernetes 1.21, policy/v1beta1 before. */}}
{{- define "writ.pdbApiVersion" -}}
{{- if semverCompare ">=1.21-0" .Capabilities.KubeVersion.Version -}}policy/v1{{- else -}}policy/v1beta1{{- end -}}
{{- end -}}

{{/* The writable /tmp every container gets (the root filesystem is read-only; temporary files go there). */}}
{{- define "writ.tmpVolume" -}}
- name: tmp
  emptyDir: { sizeLimit: 128Mi }
{{- end -}}

{{/* The Secret holding the admission webhook's serving certificate. */}}
{{- define "writ.webhookSecretName" -}}{{ include "writ.controller.fullname" . }}-webhook-tls{{- end -}}

{{/* One webhook's client config, rules and policy: call with (dict "svc" "ns" "caBundle" "w" "path"). */}}
{{- define "writ.webhookCommon" -}}
clientConfig:
  service:
    name: {{ .svc }}
    namespace: {{ .ns }}
    path: {{ .path }}
    port: 443
  {{- if .caBundle }}
  caBundle: {{ .caBundle }}
  {{- end }}
rules:
  - apiGroups: ["writ.dev"]
    apiVersions: ["v1alpha1"]
    operations: ["CREATE", "UPDATE"]
    resources: ["delegations", "intentagreements", "subscriptions"]
    scope: Namespaced
failurePolicy: {{ .w.failurePolicy }}
sideEffects: None
admissionReviewVersions: ["v1"]
timeoutSeconds: {{ .w.timeoutSeconds }}
{{- end -}}
