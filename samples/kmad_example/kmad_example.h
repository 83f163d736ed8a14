/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmad_example: a minimal kmad agent (see kmad_example.c).
 */
#ifndef KMAD_EXAMPLE_H
#define KMAD_EXAMPLE_H

#include <kmad/mad.h>

int kmad_example_get(struct kmad_port *port, u16 dlid, u8 mgmt_class,
		     u8 class_version, u16 attr_id, unsigned int timeout_ms,
		     unsigned int retries, struct kmad_mad *resp);

#endif /* KMAD_EXAMPLE_H */
