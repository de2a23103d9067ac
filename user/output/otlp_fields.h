/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The field numbers of OpenTelemetry's profiles messages (profiles
 * v1development and the common and resource protos, as opentelemetry-proto
 * v1.11.0 has them: tests/proto/), written once for the writer (otlp.c,
 * otlp_dict.c) and the reader (otlp_read.c, otlp_read_dict.c).
 */
#ifndef CFIPROF_OTLP_FIELDS_H
#define CFIPROF_OTLP_FIELDS_H

/* ProfilesData, ResourceProfiles, Resource, ScopeProfiles, InstrumentationScope */
enum { DATA_RESOURCE_PROFILES = 1, DATA_DICTIONARY = 2 };
enum { RP_RESOURCE = 1, RP_SCOPE_PROFILES = 2 };
enum { RESOURCE_ATTRIBUTES = 1 };
enum { SP_SCOPE = 1, SP_PROFILES = 2 };
enum { SCOPE_NAME = 1, SCOPE_VERSION = 2 };
/* common: KeyValue (a resource's attributes), AnyValue */
enum { KV_KEY = 1, KV_VALUE = 2, KV_KEY_STRINDEX = 3 };
enum { ANY_STRING = 1, ANY_INT = 3, ANY_STRING_STRINDEX = 8 };
/* Profile, ValueType, Sample */
enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLES = 2,
	PROFILE_TIME = 3,
	PROFILE_DURATION = 4,
	PROFILE_PERIOD_TYPE = 5,
	PROFILE_PERIOD = 6,
};
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };
enum { SAMPLE_STACK = 1, SAMPLE_ATTRIBUTES = 2, SAMPLE_VALUES = 4, SAMPLE_TIMESTAMPS = 5 };
/* ProfilesDictionary and its tables' entries */
enum {
	DICT_MAPPING = 1,
	DICT_LOCATION = 2,
	DICT_FUNCTION = 3,
	DICT_LINK = 4,
	DICT_STRING = 5,
	DICT_ATTRIBUTE = 6,
	DICT_STACK = 7,
};
enum {
	MAPPING_MEMORY_START = 1,
	MAPPING_MEMORY_LIMIT = 2,
	MAPPING_FILE_OFFSET = 3,
	MAPPING_FILENAME = 4,
	MAPPING_ATTRIBUTES = 5,
};
enum { LOCATION_MAPPING = 1, LOCATION_ADDRESS = 2, LOCATION_LINE = 3, LOCATION_ATTRIBUTES = 4 };
enum { LINE_FUNCTION = 1, LINE_LINE = 2 };
enum {
	FUNCTION_NAME = 1,
	FUNCTION_SYSTEM_NAME = 2,
	FUNCTION_FILENAME = 3,
	FUNCTION_START_LINE = 4
};
enum { LINK_TRACE_ID = 1, LINK_SPAN_ID = 2 };
enum { STACK_LOCATIONS = 1 };
/* KeyValueAndUnit: the dictionary's attributes */
enum { KVU_KEY = 1, KVU_VALUE = 2 };

#endif
