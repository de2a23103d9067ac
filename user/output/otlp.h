/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * OTLP profiles output: one OpenTelemetry ProfilesData message
 * (opentelemetry/proto/profiles/v1development/profiles.proto), what the
 * OpenTelemetry Collector, Pyroscope and other OTLP backends take in.  One
 * ResourceProfiles per process (or, when the pid is left out, per service
 * and container), with the resource attributes of the semantic conventions
 * (service.name, host.name, process.pid, process.executable.name,
 * container.id, k8s.pod.uid); one Profile per sample type (samples/count
 * for CPU, one per -e event and off-CPU); the dictionary shared by all.
 */
#ifndef CFIPROF_OUTPUT_OTLP_H
#define CFIPROF_OUTPUT_OTLP_H

#include <stdio.h>

#include "user/output/protobuf.h"
#include "user/profile/profile.h"

/* Appends p as a ProfilesData message to out; 0, or -1 (out of memory, or p fails profile_check).
 */
int otlp_encode(const struct profile *p, struct pbuf *out);
/* Writes p as one ProfilesData message, not compressed; 0 or -1. */
int otlp_write(FILE *f, const struct profile *p);

#endif
