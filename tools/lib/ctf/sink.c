// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The babeltrace2 graph and our sink component (sink.h). */
#include "ctf/bt2.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctf/sink.h"
#include "core/escape.h"
#include "core/log.h"

/* The sink's state: one message iterator per input port. */
struct sink {
	const struct ctf_read *r;
	uint64_t n_ports;
	bt_message_iterator **iters;
	uint64_t n_iters, cur;
	int err;	/* negative errno from the callback */
};

static bt_component_class_initialize_method_status
sink_init(bt_self_component_sink *self, bt_self_component_sink_configuration *conf,
	  const bt_value *params, void *data)
{
	struct sink *s = data;
	char name[32];
	uint64_t i;

	bt_self_component_set_data(bt_self_component_sink_as_self_component(self), s);
	for (i = 0; i < s->n_ports; i++) {
		snprintf(name, sizeof(name), "in%" PRIu64, i);
		if (bt_self_component_sink_add_input_port(self, name, NULL, NULL) !=
		    BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
			return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
	}
	return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

static bt_component_class_sink_graph_is_configured_method_status
sink_configured(bt_self_component_sink *self)
{
	struct sink *s = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
	uint64_t i;

	s->iters = calloc(s->n_ports ? s->n_ports : 1, sizeof(*s->iters));
	if (!s->iters)
		return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_MEMORY_ERROR;
	for (i = 0; i < s->n_ports; i++) {
		if (bt_message_iterator_create_from_sink_component(self,
			bt_self_component_sink_borrow_input_port_by_index(self, i),
			&s->iters[i]) != BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK)
			return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
		s->n_iters++;
	}
	return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK;
}

static bt_component_class_sink_consume_method_status sink_consume(bt_self_component_sink *self)
{
	struct sink *s = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
	bt_message_array_const msgs;
	uint64_t count, i;
	int err = 0;

	if (s->n_iters == 0)
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
	if (s->cur >= s->n_iters)
		s->cur = 0;
	switch (bt_message_iterator_next(s->iters[s->cur], &msgs, &count)) {
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
		for (i = 0; i < count; i++) {
			if (!err)
				err = s->r->fn(s->r->data, msgs[i]);
			bt_message_put_ref(msgs[i]);
		}
		if (err) {
			s->err = err;
			return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
		}
		/* stay on this stream: batches from one iterator are cheapest */
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
		bt_message_iterator_put_ref(s->iters[s->cur]);
		s->iters[s->cur] = s->iters[--s->n_iters];
		return s->n_iters ? BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK
				  : BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
		s->cur++;
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN;
	case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_MEMORY_ERROR;
	default:
		return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
	}
}

static void sink_finalize(bt_self_component_sink *self)
{
	struct sink *s = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
	uint64_t i;

	if (!s)
		return;
	for (i = 0; i < s->n_iters; i++)
		bt_message_iterator_put_ref(s->iters[i]);
	free(s->iters);
	s->iters = NULL;
	s->n_iters = 0;
}

/* The text of a babeltrace2 error cause without the trailing
 * "msg-it-addr=0x..."-style fields, which only mean something to its
 * developers. */
static void cause_text(const bt_error_cause *cause, char *buf, size_t size)
{
	const char *m = bt_error_cause_get_message(cause);
	const char *cut;
	size_t n;

	if (!m)
		m = "unknown error";
	cut = strstr(m, ": msg-it-addr=");
	n = cut ? (size_t)(cut - m) : strlen(m);
	/* one line, and what it quotes of the trace's metadata (names the
	 * application registered) escaped */
	escape__str(buf, size, m, n, 0, 0);
}

/* The cause to show: the deepest that names a file of the trace (that says
 * what is broken and where), else the deepest a plugin gave, else the
 * first; NULL if there is none. */
static const bt_error_cause *pick_cause(const bt_error *e, const char *dir)
{
	uint64_t i, n = bt_error_get_cause_count(e);

	for (i = 0; i < n; i++) {
		const bt_error_cause *c = bt_error_borrow_cause_by_index(e, i);
		const char *m = bt_error_cause_get_message(c);

		if (m && strstr(m, dir))
			return c;
	}
	for (i = 0; i < n; i++) {
		const bt_error_cause *c = bt_error_borrow_cause_by_index(e, i);

		if (bt_error_cause_get_actor_type(c) != BT_ERROR_CAUSE_ACTOR_TYPE_UNKNOWN)
			return c;
	}
	return n ? bt_error_borrow_cause_by_index(e, 0) : NULL;
}

/* Report the current thread's babeltrace2 error in one line and clear it.
 * With -v, every cause follows. */
static void report_bt_error(const char *what, const char *dir)
{
	const bt_error *e = bt_current_thread_take_error();
	const bt_error_cause *pick;
	uint64_t i, n;
	char msg[512];

	if (!e) {
		p_err("%s '%s' failed (no details from babeltrace2)", what, dir);
		return;
	}
	n = bt_error_get_cause_count(e);
	pick = pick_cause(e, dir);
	if (pick)
		cause_text(pick, msg, sizeof(msg));
	else
		snprintf(msg, sizeof(msg), "unknown error");
	p_err("%s '%s' failed: %s (cut short, damaged or still being written? "
	      "-v shows more)", what, dir, msg);
	for (i = 0; log_verbose && i < n; i++) {
		cause_text(bt_error_borrow_cause_by_index(e, i), msg, sizeof(msg));
		fprintf(stderr, "  caused by: %s\n", msg);
	}
	bt_error_release(e);
}

/* The graph's parts, for building and freeing. */
struct graph {
	const bt_plugin *ctf_plugin, *utils_plugin;
	bt_component_class_sink *sink_cls;
	const bt_component_source *src;
	const bt_component_filter *mux;
	const bt_component_sink *sink;
	bt_value *params;
	bt_graph *graph;
	bt_logging_level lvl;
};

/* Add src.ctf.fs over every trace. Return 0, -ENOMEM or -EIO (reported). */
static int add_source(struct graph *g, const struct ctf_read *r)
{
	bt_value *inputs = NULL;
	size_t k;

	g->params = bt_value_map_create();
	if (!g->params ||
	    bt_value_map_insert_empty_array_entry(g->params, "inputs", &inputs) !=
		    BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK)
		return -ENOMEM;
	for (k = 0; k < r->n_dirs; k++)
		if (bt_value_array_append_string_element(inputs, r->dirs[k]) !=
		    BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK)
			return -ENOMEM;
	if (bt_graph_add_source_component(g->graph,
			bt_plugin_borrow_source_component_class_by_name_const(g->ctf_plugin, "fs"),
			"source", g->params, g->lvl, &g->src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		report_bt_error("opening trace", r->shown);
		return -EIO;
	}
	return 0;
}

/* Add [the muxer and] our sink with N_PORTS input ports. Return 0, -ENOMEM
 * or -EIO (reported). */
static int add_sink(struct graph *g, const struct ctf_read *r, struct sink *s)
{
	const bt_component_class_sink_consume_method consume = sink_consume;

	if (r->ordered && bt_graph_add_filter_component(g->graph,
			bt_plugin_borrow_filter_component_class_by_name_const(g->utils_plugin, "muxer"),
			"muxer", NULL, g->lvl, &g->mux) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		report_bt_error("creating the muxer for", r->shown);
		return -EIO;
	}
	g->sink_cls = bt_component_class_sink_create("sidescope", consume);
	if (!g->sink_cls ||
	    bt_component_class_sink_set_initialize_method(g->sink_cls, sink_init) !=
		    BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK ||
	    bt_component_class_sink_set_graph_is_configured_method(g->sink_cls, sink_configured) !=
		    BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK ||
	    bt_component_class_sink_set_finalize_method(g->sink_cls, sink_finalize) !=
		    BT_COMPONENT_CLASS_SET_METHOD_STATUS_OK)
		return -ENOMEM;
	if (bt_graph_add_sink_component_with_initialize_method_data(g->graph, g->sink_cls, "sink",
			NULL, s, g->lvl, &g->sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
		report_bt_error("creating the reader for", r->shown);
		return -EIO;
	}
	return 0;
}

/* Connect the source's ports to the muxer's or the sink's, and the muxer
 * to the sink. Return 0 or -EIO (reported). */
static int connect(struct graph *g, const struct ctf_read *r, uint64_t n_out)
{
	uint64_t i;

	for (i = 0; i < n_out; i++) {
		const bt_port_output *op = bt_component_source_borrow_output_port_by_index_const(g->src, i);
		const bt_port_input *ip = g->mux
			? bt_component_filter_borrow_input_port_by_index_const(g->mux, i)
			: bt_component_sink_borrow_input_port_by_index_const(g->sink, i);

		if (!ip || bt_graph_connect_ports(g->graph, op, ip, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
			report_bt_error("connecting the streams of", r->shown);
			return -EIO;
		}
	}
	if (g->mux && bt_graph_connect_ports(g->graph,
			bt_component_filter_borrow_output_port_by_index_const(g->mux, 0),
			bt_component_sink_borrow_input_port_by_index_const(g->sink, 0), NULL) !=
		   BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
		report_bt_error("connecting the muxer for", r->shown);
		return -EIO;
	}
	return 0;
}

/* Run the graph to its end. Return 0, the callback's error or -EIO
 * (reported). */
static int run(struct graph *g, const struct ctf_read *r, struct sink *s)
{
	for (;;) {
		bt_graph_run_status st = bt_graph_run(g->graph);

		if (st == BT_GRAPH_RUN_STATUS_OK)
			return 0;
		if (st == BT_GRAPH_RUN_STATUS_AGAIN)
			continue;
		if (s->err) {
			if (s->err != -ECANCELED)
				p_err("reading trace '%s' failed: %s", r->shown, strerror(-s->err));
			bt_current_thread_clear_error();
			return s->err;
		}
		report_bt_error("reading trace", r->shown);
		return -EIO;
	}
}

int ctf_sink__read(const struct ctf_read *r)
{
	struct graph g = { .lvl = log_verbose ? BT_LOGGING_LEVEL_WARNING : BT_LOGGING_LEVEL_NONE };
	struct sink s = { .r = r };
	struct err e;
	uint64_t n_out;
	int err = -EIO;

	if (bt2__load(&e)) {
		p_err("%s (install libbabeltrace2-0)", e.msg);
		return -ELIBACC;
	}
	if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &g.ctf_plugin) !=
		    BT_PLUGIN_FIND_STATUS_OK ||
	    bt_plugin_find("utils", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &g.utils_plugin) !=
		    BT_PLUGIN_FIND_STATUS_OK) {
		p_err("cannot load babeltrace2's ctf and utils plugins (install babeltrace2)");
		goto cleanup;
	}
	g.graph = bt_graph_create(0);
	if (!g.graph) {
		err = -ENOMEM;
		goto cleanup;
	}
	err = add_source(&g, r);
	if (err)
		goto cleanup;
	n_out = bt_component_source_get_output_port_count(g.src);
	s.n_ports = r->ordered ? 1 : n_out;
	err = add_sink(&g, r, &s);
	if (!err)
		err = connect(&g, r, n_out);
	if (!err)
		err = run(&g, r, &s);
cleanup:
	bt_graph_put_ref(g.graph);
	bt_component_class_sink_put_ref(g.sink_cls);
	bt_value_put_ref(g.params);
	bt_plugin_put_ref(g.ctf_plugin);
	bt_plugin_put_ref(g.utils_plugin);
	return err;
}
