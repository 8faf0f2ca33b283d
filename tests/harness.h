/* Shared helpers for the C tests: a private simulated fabric per test. */
#ifndef SIO_TEST_HARNESS_H
#define SIO_TEST_HARNESS_H

#include <stdint.h>
#include "smartio.h"

/* A fabric name unique to this process and call. */
const char *th_fabric_name(char *buf, size_t len);
/* Writes topology text to a temporary file; returns its path (static). */
const char *th_topology_file(const char *text);
/* Creates a fabric from text (NULL = built-in default), serving node
 * (NULL = all nodes). Fails the test on error. */
struct smartio *th_open(const char *topo_text, const char *node,
			char *fabric, size_t fabric_len);
struct smartio *th_join(const char *fabric, const char *node);
unsigned th_node(struct smartio *h, const char *name);
unsigned th_dev(struct smartio *h, const char *name);
/* Used LUT / requester entries summed over every adapter of node. */
unsigned th_luts_used(struct smartio *h, unsigned node);
unsigned th_reqs_used(struct smartio *h, unsigned node);
/* Whether an event line with this kind and object appeared after *cursor. */
int th_saw_event(struct smartio *h, uint64_t *cursor, const char *kind,
		 const char *object);

#endif
