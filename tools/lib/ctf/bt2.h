/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* libbabeltrace2, loaded when a command first reads a trace (ctf,
 * timeline --lttng), not linked: with GLib and PCRE behind it, about 2 ms
 * of every run's start-up in the dynamic loader, profile's included.
 *
 * Include this instead of <babeltrace2/babeltrace.h>: each function the
 * code calls is named through the table (core/dynlib.h), with its own
 * type. ctf_sink__read loads the library before the first call; every
 * other call works on what a read gave. A function called for the first
 * time is added to BT2_FUNCS and to the names below (the link fails until
 * it is); the header's static inline ones (bt_field_class_type_is) are
 * called as they are. */
#ifndef SIDESCOPE_BT2_H
#define SIDESCOPE_BT2_H

#include <babeltrace2/babeltrace.h>

#include "core/dynlib.h"

#define BT2_FUNCS(X) \
	X(bt_clock_class_get_frequency) \
	X(bt_clock_class_get_name) \
	X(bt_clock_class_get_offset) \
	X(bt_clock_snapshot_get_ns_from_origin) \
	X(bt_clock_snapshot_get_value) \
	X(bt_component_class_sink_create) \
	X(bt_component_class_sink_put_ref) \
	X(bt_component_class_sink_set_finalize_method) \
	X(bt_component_class_sink_set_graph_is_configured_method) \
	X(bt_component_class_sink_set_initialize_method) \
	X(bt_component_filter_borrow_input_port_by_index_const) \
	X(bt_component_filter_borrow_output_port_by_index_const) \
	X(bt_component_sink_borrow_input_port_by_index_const) \
	X(bt_component_source_borrow_output_port_by_index_const) \
	X(bt_component_source_get_output_port_count) \
	X(bt_current_thread_clear_error) \
	X(bt_current_thread_take_error) \
	X(bt_error_borrow_cause_by_index) \
	X(bt_error_cause_get_actor_type) \
	X(bt_error_cause_get_message) \
	X(bt_error_get_cause_count) \
	X(bt_error_release) \
	X(bt_event_borrow_class_const) \
	X(bt_event_borrow_common_context_field_const) \
	X(bt_event_borrow_payload_field_const) \
	X(bt_event_borrow_specific_context_field_const) \
	X(bt_event_class_borrow_payload_field_class_const) \
	X(bt_event_class_borrow_specific_context_field_class_const) \
	X(bt_event_class_borrow_stream_class_const) \
	X(bt_event_class_get_name) \
	X(bt_field_array_borrow_element_field_by_index_const) \
	X(bt_field_array_get_length) \
	X(bt_field_bit_array_get_value_as_integer) \
	X(bt_field_bool_get_value) \
	X(bt_field_borrow_class_const) \
	X(bt_field_class_get_type) \
	X(bt_field_class_structure_borrow_member_by_index_const) \
	X(bt_field_class_structure_get_member_count) \
	X(bt_field_class_structure_member_get_name) \
	X(bt_field_enumeration_signed_get_mapping_labels) \
	X(bt_field_enumeration_unsigned_get_mapping_labels) \
	X(bt_field_get_class_type) \
	X(bt_field_integer_signed_get_value) \
	X(bt_field_integer_unsigned_get_value) \
	X(bt_field_option_borrow_field_const) \
	X(bt_field_real_double_precision_get_value) \
	X(bt_field_string_get_length) \
	X(bt_field_string_get_value) \
	X(bt_field_structure_borrow_member_field_by_index_const) \
	X(bt_field_variant_borrow_selected_option_field_const) \
	X(bt_graph_add_filter_component) \
	X(bt_graph_add_sink_component_with_initialize_method_data) \
	X(bt_graph_add_source_component) \
	X(bt_graph_connect_ports) \
	X(bt_graph_create) \
	X(bt_graph_put_ref) \
	X(bt_graph_run) \
	X(bt_message_discarded_events_get_count) \
	X(bt_message_discarded_packets_get_count) \
	X(bt_message_event_borrow_default_clock_snapshot_const) \
	X(bt_message_event_borrow_event_const) \
	X(bt_message_event_borrow_stream_class_default_clock_class_const) \
	X(bt_message_get_type) \
	X(bt_message_iterator_create_from_sink_component) \
	X(bt_message_iterator_next) \
	X(bt_message_iterator_put_ref) \
	X(bt_message_put_ref) \
	X(bt_plugin_borrow_filter_component_class_by_name_const) \
	X(bt_plugin_borrow_source_component_class_by_name_const) \
	X(bt_plugin_find) \
	X(bt_plugin_put_ref) \
	X(bt_self_component_get_data) \
	X(bt_self_component_set_data) \
	X(bt_self_component_sink_add_input_port) \
	X(bt_self_component_sink_borrow_input_port_by_index) \
	X(bt_stream_class_borrow_event_common_context_field_class_const) \
	X(bt_value_array_append_string_element) \
	X(bt_value_map_create) \
	X(bt_value_map_insert_empty_array_entry) \
	X(bt_value_put_ref)

DYNLIB_DECLARE(bt2, BT2_FUNCS);

/* Load libbabeltrace2 (once). 0, or -ELIBACC with why in E. */
int bt2__load(struct err *e);

#ifndef BT2_TABLE_ITSELF
#define bt_clock_class_get_frequency (bt2.bt_clock_class_get_frequency)
#define bt_clock_class_get_name (bt2.bt_clock_class_get_name)
#define bt_clock_class_get_offset (bt2.bt_clock_class_get_offset)
#define bt_clock_snapshot_get_ns_from_origin (bt2.bt_clock_snapshot_get_ns_from_origin)
#define bt_clock_snapshot_get_value (bt2.bt_clock_snapshot_get_value)
#define bt_component_class_sink_create (bt2.bt_component_class_sink_create)
#define bt_component_class_sink_put_ref (bt2.bt_component_class_sink_put_ref)
#define bt_component_class_sink_set_finalize_method (bt2.bt_component_class_sink_set_finalize_method)
#define bt_component_class_sink_set_graph_is_configured_method (bt2.bt_component_class_sink_set_graph_is_configured_method)
#define bt_component_class_sink_set_initialize_method (bt2.bt_component_class_sink_set_initialize_method)
#define bt_component_filter_borrow_input_port_by_index_const (bt2.bt_component_filter_borrow_input_port_by_index_const)
#define bt_component_filter_borrow_output_port_by_index_const (bt2.bt_component_filter_borrow_output_port_by_index_const)
#define bt_component_sink_borrow_input_port_by_index_const (bt2.bt_component_sink_borrow_input_port_by_index_const)
#define bt_component_source_borrow_output_port_by_index_const (bt2.bt_component_source_borrow_output_port_by_index_const)
#define bt_component_source_get_output_port_count (bt2.bt_component_source_get_output_port_count)
#define bt_current_thread_clear_error (bt2.bt_current_thread_clear_error)
#define bt_current_thread_take_error (bt2.bt_current_thread_take_error)
#define bt_error_borrow_cause_by_index (bt2.bt_error_borrow_cause_by_index)
#define bt_error_cause_get_actor_type (bt2.bt_error_cause_get_actor_type)
#define bt_error_cause_get_message (bt2.bt_error_cause_get_message)
#define bt_error_get_cause_count (bt2.bt_error_get_cause_count)
#define bt_error_release (bt2.bt_error_release)
#define bt_event_borrow_class_const (bt2.bt_event_borrow_class_const)
#define bt_event_borrow_common_context_field_const (bt2.bt_event_borrow_common_context_field_const)
#define bt_event_borrow_payload_field_const (bt2.bt_event_borrow_payload_field_const)
#define bt_event_borrow_specific_context_field_const (bt2.bt_event_borrow_specific_context_field_const)
#define bt_event_class_borrow_payload_field_class_const (bt2.bt_event_class_borrow_payload_field_class_const)
#define bt_event_class_borrow_specific_context_field_class_const (bt2.bt_event_class_borrow_specific_context_field_class_const)
#define bt_event_class_borrow_stream_class_const (bt2.bt_event_class_borrow_stream_class_const)
#define bt_event_class_get_name (bt2.bt_event_class_get_name)
#define bt_field_array_borrow_element_field_by_index_const (bt2.bt_field_array_borrow_element_field_by_index_const)
#define bt_field_array_get_length (bt2.bt_field_array_get_length)
#define bt_field_bit_array_get_value_as_integer (bt2.bt_field_bit_array_get_value_as_integer)
#define bt_field_bool_get_value (bt2.bt_field_bool_get_value)
#define bt_field_borrow_class_const (bt2.bt_field_borrow_class_const)
#define bt_field_class_get_type (bt2.bt_field_class_get_type)
#define bt_field_class_structure_borrow_member_by_index_const (bt2.bt_field_class_structure_borrow_member_by_index_const)
#define bt_field_class_structure_get_member_count (bt2.bt_field_class_structure_get_member_count)
#define bt_field_class_structure_member_get_name (bt2.bt_field_class_structure_member_get_name)
#define bt_field_enumeration_signed_get_mapping_labels (bt2.bt_field_enumeration_signed_get_mapping_labels)
#define bt_field_enumeration_unsigned_get_mapping_labels (bt2.bt_field_enumeration_unsigned_get_mapping_labels)
#define bt_field_get_class_type (bt2.bt_field_get_class_type)
#define bt_field_integer_signed_get_value (bt2.bt_field_integer_signed_get_value)
#define bt_field_integer_unsigned_get_value (bt2.bt_field_integer_unsigned_get_value)
#define bt_field_option_borrow_field_const (bt2.bt_field_option_borrow_field_const)
#define bt_field_real_double_precision_get_value (bt2.bt_field_real_double_precision_get_value)
#define bt_field_string_get_length (bt2.bt_field_string_get_length)
#define bt_field_string_get_value (bt2.bt_field_string_get_value)
#define bt_field_structure_borrow_member_field_by_index_const (bt2.bt_field_structure_borrow_member_field_by_index_const)
#define bt_field_variant_borrow_selected_option_field_const (bt2.bt_field_variant_borrow_selected_option_field_const)
#define bt_graph_add_filter_component (bt2.bt_graph_add_filter_component)
#define bt_graph_add_sink_component_with_initialize_method_data (bt2.bt_graph_add_sink_component_with_initialize_method_data)
#define bt_graph_add_source_component (bt2.bt_graph_add_source_component)
#define bt_graph_connect_ports (bt2.bt_graph_connect_ports)
#define bt_graph_create (bt2.bt_graph_create)
#define bt_graph_put_ref (bt2.bt_graph_put_ref)
#define bt_graph_run (bt2.bt_graph_run)
#define bt_message_discarded_events_get_count (bt2.bt_message_discarded_events_get_count)
#define bt_message_discarded_packets_get_count (bt2.bt_message_discarded_packets_get_count)
#define bt_message_event_borrow_default_clock_snapshot_const (bt2.bt_message_event_borrow_default_clock_snapshot_const)
#define bt_message_event_borrow_event_const (bt2.bt_message_event_borrow_event_const)
#define bt_message_event_borrow_stream_class_default_clock_class_const (bt2.bt_message_event_borrow_stream_class_default_clock_class_const)
#define bt_message_get_type (bt2.bt_message_get_type)
#define bt_message_iterator_create_from_sink_component (bt2.bt_message_iterator_create_from_sink_component)
#define bt_message_iterator_next (bt2.bt_message_iterator_next)
#define bt_message_iterator_put_ref (bt2.bt_message_iterator_put_ref)
#define bt_message_put_ref (bt2.bt_message_put_ref)
#define bt_plugin_borrow_filter_component_class_by_name_const (bt2.bt_plugin_borrow_filter_component_class_by_name_const)
#define bt_plugin_borrow_source_component_class_by_name_const (bt2.bt_plugin_borrow_source_component_class_by_name_const)
#define bt_plugin_find (bt2.bt_plugin_find)
#define bt_plugin_put_ref (bt2.bt_plugin_put_ref)
#define bt_self_component_get_data (bt2.bt_self_component_get_data)
#define bt_self_component_set_data (bt2.bt_self_component_set_data)
#define bt_self_component_sink_add_input_port (bt2.bt_self_component_sink_add_input_port)
#define bt_self_component_sink_borrow_input_port_by_index (bt2.bt_self_component_sink_borrow_input_port_by_index)
#define bt_stream_class_borrow_event_common_context_field_class_const (bt2.bt_stream_class_borrow_event_common_context_field_class_const)
#define bt_value_array_append_string_element (bt2.bt_value_array_append_string_element)
#define bt_value_map_create (bt2.bt_value_map_create)
#define bt_value_map_insert_empty_array_entry (bt2.bt_value_map_insert_empty_array_entry)
#define bt_value_put_ref (bt2.bt_value_put_ref)
#endif

#endif
