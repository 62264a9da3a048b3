{{/*
Writ on a Citus cluster (citus.enabled; docs/scale.md). Kept in this file so the other
templates change by one line (writ.commonEnv includes the env below).
*/}}

{{/* The SGShardedCluster's name: citus.shardedCluster.name, or <fullname>-citus. */}}
{{- define "writ.citus.name" -}}
{{- default (printf "%s-citus" (include "writ.fullname" .)) .Values.citus.shardedCluster.name | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{/* WRIT_CITUS for both components (the layout step of the migrations on the coordinator), WRIT_CITUS_DIRECT and WRIT_CITUS_DECISION_PARTITIONS. */}}
{{- define "writ.citus.env" -}}
{{- if .Values.citus.enabled }}
- name: WRIT_CITUS
  value: {{ .Values.citus.mode | quote }}
- name: WRIT_CITUS_DIRECT
  value: {{ .Values.citus.direct | quote }}
- name: WRIT_CITUS_DECISION_PARTITIONS
  value: {{ .Values.citus.decisionPartitions | quote }}
{{- end }}
{{- end -}}

{{/* Refuses values that cannot work together. */}}
{{- define "writ.citus.validate" -}}
{{- $c := .Values.citus -}}
{{- if and $c.shardedCluster.enabled (not $c.enabled) -}}
{{- fail "citus.shardedCluster.enabled needs citus.enabled (Writ must be pointed at the coordinator)" -}}
{{- end -}}
{{- if and $c.enabled .Values.postgresCluster.enabled -}}
{{- fail "citus.enabled and postgresCluster.enabled: choose one database (the CloudNativePG Cluster is a single Postgres, not a Citus cluster)" -}}
{{- end -}}
{{- if and $c.enabled (not .Values.secret.databaseUrl) (not .Values.secret.existingSecret) -}}
{{- fail "citus.enabled: set secret.databaseUrl (or DATABASE_URL in secret.existingSecret) to the Citus coordinator's primary, e.g. postgres://writ:...@<coordinator service>:5432/writ" -}}
{{- end -}}
{{- if and $c.shardedCluster.enabled (lt (int $c.shardedCluster.coordinator.instances) 2) -}}
{{- fail "citus.shardedCluster.coordinator.instances must be at least 2 (a primary and a standby Patroni fails over to)" -}}
{{- end -}}
{{- if and $c.shardedCluster.enabled (lt (int $c.shardedCluster.shards.instancesPerCluster) 2) -}}
{{- fail "citus.shardedCluster.shards.instancesPerCluster must be at least 2 (a primary and a standby per worker group)" -}}
{{- end -}}
{{- end -}}
