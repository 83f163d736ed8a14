/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What kmad_fakeib exports to the test modules built beside it
 * (tests/fakeib/fakeib.c).
 */
#ifndef KMAD_FAKEIB_H
#define KMAD_FAKEIB_H

#include <rdma/ib_verbs.h>

int kmad_fakeib_port_event(const char *name, enum ib_event_type type);

#endif
