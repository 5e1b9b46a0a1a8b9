pub mod python_call_list;
