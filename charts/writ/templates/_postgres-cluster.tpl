{{/*
The optional CloudNativePG Cluster (postgres-cluster.yaml) and how the pods reach it. Kept in
this file so the other templates change by one line (writ.commonEnv includes the env below).
*/}}

{{/* The Cluster's name: postgresCluster.name, or <fullname>-pg. */}}
{{- define "writ.postgresCluster.name" -}}
{{- default (printf "%s-pg" (include "writ.fullname" .)) .Values.postgresCluster.name | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{/*
Environment from the Cluster, for both components (explicit env wins over the chart Secret's
envFrom): DATABASE_URL is the `uri` of CloudNativePG's `<cluster>-app` Secret (the `-rw` Service,
always the primary); the data plane also reads DATABASE_READ_URL through the `-r` Service (any
instance: a standby answers the read routes while no primary is elected; the controller does
not read it); both commit with WRIT_SYNCHRONOUS_COMMIT.
*/}}
{{- define "writ.postgresCluster.env" -}}
{{- if .Values.postgresCluster.enabled }}
{{- $name := include "writ.postgresCluster.name" . }}
{{- $c := .Values.postgresCluster }}
- name: DATABASE_URL
  valueFrom: { secretKeyRef: { name: {{ printf "%s-app" $name }}, key: uri } }
- name: CNPG_APP_USER
  valueFrom: { secretKeyRef: { name: {{ printf "%s-app" $name }}, key: username } }
- name: CNPG_APP_PASSWORD
  valueFrom: { secretKeyRef: { name: {{ printf "%s-app" $name }}, key: password } }
- name: DATABASE_READ_URL
  value: {{ printf "postgresql://$(CNPG_APP_USER):$(CNPG_APP_PASSWORD)@%s-r.%s:5432/%s" $name .Release.Namespace $c.database | quote }}
{{- with $c.synchronousCommit }}
- name: WRIT_SYNCHRONOUS_COMMIT
  value: {{ . | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Refuses values that cannot work together with the Cluster. */}}
{{- define "writ.postgresCluster.validate" -}}
{{- $c := .Values.postgresCluster -}}
{{- if $c.enabled -}}
{{- if .Values.secret.databaseUrl -}}
{{- fail "postgresCluster.enabled: leave secret.databaseUrl empty (DATABASE_URL comes from the Cluster's app Secret)" -}}
{{- end -}}
{{- if le (int $c.instances) (int $c.synchronous.number) -}}
{{- fail "postgresCluster.instances must be above postgresCluster.synchronous.number (a primary plus that many synchronous standbys)" -}}
{{- end -}}
{{- end -}}
{{- end -}}
