// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* One profile sent to Pyroscope's /ingest; see ingest.h. */
#include "user/agent/ingest.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/dynlib.h"
#include "elf/safe_open.h"
#include "user/agent/log.h"

#define CONNECT_TIMEOUT 5.0

/* libcurl, loaded by the first ingest_init() (common/dynlib.h) */
static const char *const curl_names[] = {
    "curl_easy_cleanup",   "curl_easy_escape",
    "curl_easy_getinfo",   "curl_easy_init",
    "curl_easy_perform",   "curl_easy_reset",
    "curl_easy_setopt",	   "curl_easy_strerror",
    "curl_free",	   "curl_global_cleanup",
    "curl_global_init",	   "curl_slist_append",
    "curl_slist_free_all", NULL,
};
static struct {
	void (*easy_cleanup)(CURL *h);
	char *(*easy_escape)(CURL *h, const char *s, int len);
	CURLcode (*easy_getinfo)(CURL *h, CURLINFO info, ...);
	CURL *(*easy_init)(void);
	CURLcode (*easy_perform)(CURL *h);
	void (*easy_reset)(CURL *h);
	CURLcode (*easy_setopt)(CURL *h, CURLoption opt, ...);
	const char *(*easy_strerror)(CURLcode code);
	void (*free)(void *p);
	void (*global_cleanup)(void);
	CURLcode (*global_init)(long flags);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
} curl;
static struct dynlib curl_lib = DYNLIB_INIT("libcurl.so.4", curl_names, &curl);

bool ingest_init(void)
{
	if (!dynlib_load(&curl_lib)) {
		alog(ALOG_ERROR, "cannot push: libcurl is missing", "error=%s package=libcurl4",
		     alog_quote(curl_lib.err, (char[300]){0}, 300));
		return false;
	}
	return curl.global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
}

void ingest_cleanup(void)
{
	curl.global_cleanup();
}

CURL *ingest_handle_new(void)
{
	return curl.easy_init();
}

void ingest_handle_free(CURL *h)
{
	if (h)
		curl.easy_cleanup(h);
}

int agent_push_read_token(const char *path, char *buf, size_t len)
{
	/* a symlink is followed (Kubernetes mounts secrets as ones), a FIFO never opened */
	FILE *f = fopen_regular(path);
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return n ? 0 : -ENODATA;
}

struct response {
	char text[256];
	size_t len;
};

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct response *r = ctx;
	size_t want = size * n, room = sizeof(r->text) - 1 - r->len;

	/* the start of an error body is worth logging; the rest is discarded */
	if (room) {
		memcpy(r->text + r->len, p, want < room ? want : room);
		r->len += want < room ? want : room;
		r->text[r->len] = 0;
	}
	return want;
}

/* "APP{hostname=H,k=v}", as Pyroscope's ingest expects the name */
int agent_push_name(const char *app_name, const char *hostname, const char *labels, char *buf,
		    size_t len)
{
	int n =
	    snprintf(buf, len, "%s{%s%s%s%s}", app_name, hostname ? "hostname=" : "",
		     hostname ? hostname : "", hostname && labels ? "," : "", labels ? labels : "");

	return n >= 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/*
 * Adds the tenant (X-Scope-OrgID, as Pyroscope, Mimir and the Collector's
 * headers_setter take it) and the bearer token of c to hdrs; false with why
 * when the token file cannot be read.
 */
static bool auth_headers(const struct agent_push_config *c, struct curl_slist **hdrs, char *why,
			 size_t whylen)
{
	char hdr[4352], token[4096];

	if (c->tenant) {
		snprintf(hdr, sizeof(hdr), "X-Scope-OrgID: %s", c->tenant);
		*hdrs = curl.slist_append(*hdrs, hdr);
	}
	if (c->token_file) {
		int err = agent_push_read_token(c->token_file, token, sizeof(token));

		if (err) {
			snprintf(why, whylen, "cannot read token file %s: %s", c->token_file,
				 strerror(-err));
			return false;
		}
		snprintf(hdr, sizeof(hdr), "Authorization: Bearer %s", token);
		*hdrs = curl.slist_append(*hdrs, hdr);
	}
	/* no "Expect: 100-continue" round trip for bodies over 1 KiB */
	*hdrs = curl.slist_append(*hdrs, "Expect:");
	return true;
}

/* POSTs data to url with hdrs (freed here); see ingest_post. */
static enum push_result post(CURL *h, const struct agent_push_config *c, const char *url,
			     struct curl_slist *hdrs, const char *data, size_t len, long *status,
			     char *why, size_t whylen)
{
	struct response resp = {0};
	enum push_result r = PUSH_RETRY;
	CURLcode cc;

	curl.easy_reset(h);
	curl.easy_setopt(h, CURLOPT_URL, url);
	curl.easy_setopt(h, CURLOPT_POST, 1L);
	curl.easy_setopt(h, CURLOPT_POSTFIELDS, data);
	curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl.easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl.easy_setopt(h, CURLOPT_USERAGENT, "cfiprof-agent/0.1");
	curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(c->timeout * 1000));
	curl.easy_setopt(
	    h, CURLOPT_CONNECTTIMEOUT_MS,
	    (long)((c->timeout < CONNECT_TIMEOUT ? c->timeout : CONNECT_TIMEOUT) * 1000));
	/* threads: no SIGALRM-based DNS timeouts */
	curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl.easy_setopt(h, CURLOPT_WRITEDATA, &resp);
	cc = curl.easy_perform(h);
	if (cc != CURLE_OK) {
		snprintf(why, whylen, "%s", curl.easy_strerror(cc));
		goto out;
	}
	curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
	if (*status >= 200 && *status < 300) {
		r = PUSH_OK;
		goto out;
	}
	snprintf(why, whylen, "HTTP %ld: %.120s", *status, resp.text);
	/*
	 * The backend says this profile itself is bad: retrying cannot help and
	 * would hold up every later one.  Auth errors and throttling are retried:
	 * a fixed token or a calmer backend then gets everything.
	 */
	if (*status == 400 || *status == 413 || *status == 415 || *status == 422)
		r = PUSH_DROP;
out:
	curl.slist_free_all(hdrs);
	return r;
}

/* The URL without its trailing slashes: its length. */
static size_t url_len(const char *url)
{
	size_t ul = strlen(url);

	while (ul && url[ul - 1] == '/')
		ul--;
	return ul;
}

enum push_result ingest_post(CURL *h, const struct agent_push_config *c, const char *service,
			     uint64_t from_ns, uint64_t until_ns, const char *data, size_t len,
			     long *status, char *why, size_t whylen)
{
	struct curl_slist *hdrs = NULL;
	char name[AGENT_PUSH_NAME_MAX], url[4096];
	uint64_t from = from_ns / 1000000000ull, until = until_ns / 1000000000ull;
	size_t ul = url_len(c->url);
	char *esc = NULL;

	*status = 0;
	why[0] = 0;
	if (until <= from)
		until = from + 1;
	if (agent_push_name(service[0] ? service : c->app_name, c->hostname, c->labels, name,
			    sizeof(name))) {
		snprintf(why, whylen, "name too long");
		return PUSH_DROP;
	}
	esc = curl.easy_escape(h, name, 0);
	if (!esc) {
		snprintf(why, whylen, "out of memory");
		return PUSH_RETRY;
	}
	/* a URL that already ends in /ingest is taken as the endpoint itself */
	snprintf(url, sizeof(url), "%.*s%s?name=%s&from=%" PRIu64 "&until=%" PRIu64 "&format=pprof",
		 (int)ul, c->url,
		 ul >= 7 && !strncmp(c->url + ul - 7, "/ingest", 7) ? "" : "/ingest", esc, from,
		 until);
	curl.free(esc);
	hdrs = curl.slist_append(hdrs, "Content-Type: application/octet-stream");
	if (!auth_headers(c, &hdrs, why, whylen)) {
		curl.slist_free_all(hdrs);
		return PUSH_RETRY;
	}
	return post(h, c, url, hdrs, data, len, status, why, whylen);
}

enum push_result otlp_post(CURL *h, const struct agent_push_config *c, const char *data, size_t len,
			   long *status, char *why, size_t whylen)
{
	static const char path[] = "/v1development/profiles";
	struct curl_slist *hdrs = NULL;
	size_t ul = url_len(c->url), pl = sizeof(path) - 1;
	char url[4096];

	*status = 0;
	why[0] = 0;
	/* a URL that already ends in the signal's path is taken as the endpoint itself */
	snprintf(url, sizeof(url), "%.*s%s", (int)ul, c->url,
		 ul >= pl && !strncmp(c->url + ul - pl, path, pl) ? "" : path);
	/* OTLP/HTTP's binary encoding, gzip'd as its receivers all accept */
	hdrs = curl.slist_append(hdrs, "Content-Type: application/x-protobuf");
	hdrs = curl.slist_append(hdrs, "Content-Encoding: gzip");
	if (!auth_headers(c, &hdrs, why, whylen)) {
		curl.slist_free_all(hdrs);
		return PUSH_RETRY;
	}
	return post(h, c, url, hdrs, data, len, status, why, whylen);
}
